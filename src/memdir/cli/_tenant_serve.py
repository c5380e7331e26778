"""``memdir serve STORES --tenants FILE``: one HTTP server for a folder of stores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.cli._common import err_console, fail

if TYPE_CHECKING:
    from memdir.server import Tenant
    from memdir.store import Store

__all__ = ["serve_tenants"]


def serve_tenants(stores: Path, tenants_file: Path, *, host: str, port: int,
                  allow_remote: bool, sync: bool, sync_interval: float) -> None:
    """Serve every tenant of ``tenants_file`` over HTTP until stopped.

    With ``sync``, each tenant store that is a replica syncs with its remote as
    ``serve --sync`` does, its commits naming the tenant whose token wrote.
    """
    from memdir.config import get_settings
    from memdir.server import (
        MCP_PATH,
        LoopbackError,
        TenantsError,
        check_bind,
        load_tenants,
        run_tenants,
        tenants_app,
    )

    if not stores.is_dir():
        fail(f"{stores} is not a folder.", "with --tenants, STORE is the folder that holds "
             "every tenant's store folder; create it first.")
    try:
        check_bind(host, token="tenant tokens", allow_remote=allow_remote)
        tenants = load_tenants(tenants_file)
        on_write = _syncing(stores, tenants, sync_interval) if sync else None
        app = tenants_app(tenants, stores, host=host, port=port, on_write=on_write,
                          max_file_bytes=get_settings().max_file_bytes)
    except (LoopbackError, TenantsError, ValueError) as exc:
        fail(str(exc))
    count = len({t.store for t in tenants})
    err_console.print(f"memdir MCP server for {len(tenants)} tenant(s) over {count} store(s) "
                      f"in {stores} on http://{host}:{port}{MCP_PATH}; each token reaches its "
                      "own store. Ctrl-C stops it.", markup=False, highlight=False)
    try:
        run_tenants(app, host=host, port=port, allow_remote=allow_remote)
    except SystemExit as exc:  # uvicorn exits this way when it cannot start
        if exc.code:
            fail(f"the HTTP server could not start (uvicorn exit status {exc.code}).")


def _syncing(stores: Path, tenants: Sequence[Tenant],
             interval: float) -> Callable[[Tenant, Store], None]:
    """A syncer per tenant store that has a remote, and the write callback naming the tenant."""
    from memdir.cli._syncing import start_syncer
    from memdir.server import tenant_store
    from memdir.store import Store
    from memdir.store.replica import Replica
    from memdir.store.syncer import Syncer

    syncers: dict[Path, Syncer] = {}
    for tenant in tenants:
        store = Store(tenant_store(stores, tenant))
        if store.root in syncers or Replica(store).url is None:
            continue
        syncers[store.root] = start_syncer(store, interval=interval, writer=None,
                                           stop_at_exit=True)

    def wrote(tenant: Tenant, store: Store) -> None:
        syncer = syncers.get(store.root)
        if syncer is not None:
            syncer.changed(f"token {tenant.name}")

    return wrote
