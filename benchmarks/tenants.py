"""Start-up of the many-tenant server: time and memory to make the app, by tenant count.

For N tenants (a tenants file of N write tenants, each with its own store folder),
in a fresh process per measurement, as ``memdir serve STORES --tenants FILE``
starts: reading the tenants file (``load_tenants``, or this code's
``TenantIndex``, whose first start parses the file and writes its index, and whose
later starts only hash the file and open the index), making the app
(``tenants_app``; the memory a second one keeps is traced), and, for
``--sync``, setting up syncing when every store is a replica (of one empty bare
remote on disk): the baseline's ``_syncing`` opened and synced every store at
start; this code's opens none until a tenant's first request. With
``--baseline-src`` the same is measured on other code in the same run (e.g.
``main``'s ``src/``); the ratio is this code's cost over the baseline's. This code
also reports what a tenant's first request pays: building its tools, and with
``--sync`` starting its syncer.

Run: ``nice .venv/bin/python benchmarks/tenants.py [--tenants 200 2000]
[--baseline-src /path/to/main/src]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _baseline import add_baseline_options, measure_baseline  # noqa: E402


def _site(base: Path, count: int) -> tuple[Path, Path]:
    file, stores = base / "tenants.yaml", base / "stores"
    stores.mkdir(exist_ok=True)
    file.write_text("tenants:\n" + "".join(
        f"  t{n}:\n    token_sha256: {hashlib.sha256(str(n).encode()).hexdigest()}\n"
        f"    store: t{n}\n    toolset: write\n    access: write\n" for n in range(count)))
    return file, stores


def _replicas(base: Path, stores: Path, count: int) -> None:
    """Every tenant's store a replica of one empty bare remote (copies of one made replica)."""
    from memdir.store import Store
    from memdir.store.replica import Replica

    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    template = base / "template"
    Replica(Store(template, create=True), name="bench").attach(str(remote))
    for n in range(count):
        shutil.copytree(template, stores / f"t{n}", symlinks=True)


def _read(file: Path) -> tuple[Any, float, float | None]:
    """The tenants as a server reads them: (what it got, first start's s, a later start's s)."""
    import pydantic  # noqa: F401 - loaded before the clock starts, for both versions
    import yaml  # noqa: F401

    import memdir.server as server

    started = time.perf_counter()
    if not hasattr(server, "TenantIndex"):  # older code: the file parsed at every start
        return server.load_tenants(file), time.perf_counter() - started, None
    first = server.TenantIndex(file)
    made = time.perf_counter() - started
    first.close()
    started = time.perf_counter()
    index = server.TenantIndex(file)
    return index, made, time.perf_counter() - started


def measure(count: int, sync: bool = False) -> dict[str, Any]:
    """Make the app for ``count`` tenants here; its time, memory, and one tenant's build."""
    from memdir.server import tenants_app

    with tempfile.TemporaryDirectory(prefix="memdir-tenants-") as scratch:
        file, stores = _site(Path(scratch), count)
        if sync:
            _replicas(Path(scratch), stores, count)
        tenants, read_first, read_later = _read(file)
        started = time.perf_counter()
        app = tenants_app(tenants, stores, host="127.0.0.1", port=8000)
        seconds = time.perf_counter() - started
        sync_seconds = open_seconds = None
        if sync:
            sync_seconds, open_seconds = _sync_start(stores, tenants)
        del app
        tracemalloc.start()  # a second app, traced: the memory it keeps
        app = tenants_app(tenants, stores, host="127.0.0.1", port=8000)
        kept = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        build = getattr(app, "_build", None)
        first = None
        if build is not None:  # what a tenant's first request pays (modules loaded already)
            build(_pick(tenants, 0))
            started = time.perf_counter()
            build(_pick(tenants, 1))
            first = time.perf_counter() - started
    return {"tenants": count, "start_seconds": seconds, "start_mb": kept / 1e6,
            "first_request_build_seconds": first, "read_first_seconds": read_first,
            "read_later_seconds": read_later, "sync_start_seconds": sync_seconds,
            "sync_open_seconds": open_seconds}


def _pick(tenants: Any, n: int) -> Any:
    """Tenant ``t{n}`` from a list or an index."""
    if isinstance(tenants, list):
        return tenants[n]
    return tenants.get(hashlib.sha256(str(n).encode()).hexdigest())


def _sync_start(stores: Path, tenants: Any) -> tuple[float, float | None]:
    """Seconds ``--sync`` takes at start, and (this code) a tenant's first open of its syncer."""
    from memdir.cli import _tenant_serve as serve
    from memdir.store import Store

    started = time.perf_counter()
    if not hasattr(serve, "_Syncing"):  # older code: every store opened and synced at start
        serve._syncing(stores, tenants, 3600.0)  # type: ignore[attr-defined]
        return time.perf_counter() - started, None
    hooks = serve._Syncing(3600.0)
    seconds = time.perf_counter() - started
    tenant = _pick(tenants, 0)
    started = time.perf_counter()
    hooks.opened(tenant, Store(stores / tenant.store))
    return seconds, time.perf_counter() - started


def _fresh(count: int, src: Path | None, sync: bool) -> dict[str, Any]:
    extra = ["--sync"] if sync else []
    if src is not None:
        result: dict[str, Any] = measure_baseline(__file__, src, ["--one", str(count), *extra])
        return result
    done = subprocess.run([sys.executable, __file__, "--one", str(count), *extra, "--json"],
                          capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--sync", action="store_true",
                        help="every store a replica, and time --sync's set-up too")
    add_baseline_options(parser)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one, args.sync)))
        return
    rows = []
    for count in args.tenants:
        after = _fresh(count, None, args.sync)
        before = _fresh(count, args.baseline_src, args.sync) if args.baseline_src else None
        rows.append({"after": after, "before": before})
    if args.json:
        print(json.dumps(rows))
        return
    _start_table(rows, args.sync)
    print("| tenants | baseline start (ms) | baseline kept (MB) | start (ms) | kept (MB) | "
          "start vs baseline | a first request builds its tenant (ms) |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        a, b = row["after"], row["before"]
        ratio = f"1/{b['start_seconds'] / a['start_seconds']:,.0f}" if b else "-"
        first = a["first_request_build_seconds"]
        print(f"| {a['tenants']} | {b['start_seconds'] * 1e3:,.0f} | {b['start_mb']:.1f} | "
              if b else f"| {a['tenants']} | - | - | ", end="")
        print(f"{a['start_seconds'] * 1e3:.2f} | {a['start_mb']:.2f} | {ratio} | "
              + (f"{first * 1e3:.1f} |" if first is not None else "- |"))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:,.1f}"


def _start_table(rows: list[dict[str, Any]], sync: bool) -> None:
    """Start-up as a server pays it: the tenants file read, and --sync's set-up."""
    print("| tenants | baseline: read the file (ms) | read, first start (ms) | read, later "
          "starts (ms) | later starts vs baseline |" + (
              " baseline: --sync at start (ms) | --sync at start (ms) | a first request "
              "starts its syncer (ms) |" if sync else ""))
    print("|---|---|---|---|---|" + ("---|---|---|" if sync else ""))
    for row in rows:
        a, b = row["after"], row["before"] or {}
        ratio = (f"1/{b['read_first_seconds'] / a['read_later_seconds']:,.0f}"
                 if b and a["read_later_seconds"] else "-")
        line = (f"| {a['tenants']} | {_ms(b.get('read_first_seconds'))} | "
                f"{_ms(a['read_first_seconds'])} | {_ms(a['read_later_seconds'])} | {ratio} |")
        if sync:
            line += (f" {_ms(b.get('sync_start_seconds'))} | {_ms(a['sync_start_seconds'])} | "
                     f"{_ms(a['sync_open_seconds'])} |")
        print(line)
    print()


if __name__ == "__main__":
    main()
