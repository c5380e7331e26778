"""``memdir serve STORES --tenants FILE``: one HTTP server for a folder of stores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memdir.cli._common import err_console, fail, keep_startup_heap
from memdir.cli._syncing import _stop_at_exit

if TYPE_CHECKING:
    from memdir.server import Tenant
    from memdir.store import Store
    from memdir.store.syncer import Syncer

__all__ = ["serve_tenants"]


def serve_tenants(stores: Path, tenants_file: Path, *, host: str, port: int,
                  allow_remote: bool, sync: bool, sync_interval: float) -> None:
    """Serve every tenant of ``tenants_file`` over HTTP until stopped.

    The tenants file is read through its index (:class:`~memdir.server.TenantIndex`),
    so start-up does not grow with the tenants. With ``sync``, a tenant store that
    is a replica syncs with its remote as ``serve --sync`` does, from the moment its
    tenant's tools are first built (its first request) until they are closed, its
    commits naming the tenant whose token wrote.
    """
    from memdir.config import get_settings
    from memdir.server import (
        MCP_PATH,
        LoopbackError,
        TenantIndex,
        TenantsError,
        check_bind,
        run_tenants,
        tenants_app,
    )

    if not stores.is_dir():
        fail(f"{stores} is not a folder.", "with --tenants, STORE is the folder that holds "
             "every tenant's store folder; create it first.")
    try:
        check_bind(host, token="tenant tokens", allow_remote=allow_remote)
        index = TenantIndex(tenants_file)
        hooks = _Syncing(sync_interval) if sync else None
        app = tenants_app(index, stores, host=host, port=port,
                          on_write=hooks.wrote if hooks else None,
                          on_open=hooks.opened if hooks else None,
                          on_close=hooks.closed if hooks else None,
                          max_file_bytes=get_settings().max_file_bytes)
    except (LoopbackError, TenantsError, ValueError) as exc:
        fail(str(exc))
    err_console.print(f"memdir MCP server for {index.count} tenant(s) over {index.stores} "
                      f"store(s) in {stores} on http://{host}:{port}{MCP_PATH}; each token "
                      "reaches its own store. Ctrl-C stops it.", markup=False, highlight=False)
    keep_startup_heap()
    try:
        run_tenants(app, host=host, port=port, allow_remote=allow_remote)
    except SystemExit as exc:  # uvicorn exits this way when it cannot start
        if exc.code:
            fail(f"the HTTP server could not start (uvicorn exit status {exc.code}).")


class _Syncing:
    """One syncer per tenant store in use that has a remote, started when a tenant opens.

    A store shared by several tenants has one syncer while any of them is open; the
    last to close stops it (after a last sync of waiting writes), and the process's
    exit stops the rest the same way.
    """

    def __init__(self, interval: float) -> None:
        import threading

        self.interval = interval
        self._lock = threading.Lock()
        self._syncers: dict[Path, tuple[Syncer, int]] = {}
        self._no_remote: set[Path] = set()
        self._closing: set[Syncer] = set()
        """Syncers whose last sync is running on a closing tenant's thread."""
        _stop_at_exit(self.stop_all)

    def opened(self, tenant: Tenant, store: Store) -> None:
        from memdir.store.replica import Replica

        with self._lock:
            held = self._syncers.get(store.root)
            if held is not None:
                self._syncers[store.root] = (held[0], held[1] + 1)
                return
            if store.root in self._no_remote:
                return
        if Replica(store).url is None:
            with self._lock:
                self._no_remote.add(store.root)
            return
        from memdir.cli._syncing import start_syncer

        syncer = start_syncer(store, interval=self.interval, writer=None, wait=False)
        with self._lock:
            held = self._syncers.get(store.root)
            if held is None:
                self._syncers[store.root] = (syncer, 1)
                return
            self._syncers[store.root] = (held[0], held[1] + 1)
        syncer.stop()  # another tenant of the store started one meanwhile

    def closed(self, tenant: Tenant, store: Store) -> None:
        with self._lock:
            held = self._syncers.get(store.root)
            if held is None:
                return
            if held[1] > 1:
                self._syncers[store.root] = (held[0], held[1] - 1)
                return
            del self._syncers[store.root]
            self._closing.add(held[0])
        try:
            held[0].stop()
        finally:
            with self._lock:
                self._closing.discard(held[0])

    def wrote(self, tenant: Tenant, store: Store) -> None:
        with self._lock:
            held = self._syncers.get(store.root)
        if held is not None:
            held[0].changed(f"token {tenant.name}")

    def stop_all(self) -> None:
        """Stop every syncer with its last sync, those a closing tenant is stopping too.

        A stop already under way on another thread is waited for (its sync holds
        the syncer's lock), so the process never exits in the middle of it.
        """
        with self._lock:
            held = [s for s, _ in self._syncers.values()] + list(self._closing)
            self._syncers.clear()
        for syncer in held:
            syncer.stop()
