"""Start-up of the many-tenant server: time and memory to make the app, by tenant count.

``tenants_app`` is made for N tenants (a tenants file of N write tenants, each
with its own store folder) in a fresh process per measurement, timing the call
and tracing the memory a second one keeps (``tracemalloc``). With ``--baseline-src`` the
same is measured on other code in the same run (e.g. ``main``'s ``src/``, which
built every tenant at start); the ratio is this code's cost over the baseline's.
This code also reports what a tenant's first request pays: building its tools.

Run: ``nice .venv/bin/python benchmarks/tenants.py [--tenants 200 2000]
[--baseline-src /path/to/main/src]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
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


def measure(count: int) -> dict[str, Any]:
    """Make the app for ``count`` tenants here; its time, memory, and one tenant's build."""
    from memdir.server import load_tenants, tenants_app

    with tempfile.TemporaryDirectory(prefix="memdir-tenants-") as scratch:
        file, stores = _site(Path(scratch), count)
        tenants = load_tenants(file)
        started = time.perf_counter()
        app = tenants_app(tenants, stores, host="127.0.0.1", port=8000)
        seconds = time.perf_counter() - started
        del app
        tracemalloc.start()  # a second app, traced: the memory it keeps
        app = tenants_app(tenants, stores, host="127.0.0.1", port=8000)
        kept = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        build = getattr(app, "_build", None)
        first = None
        if build is not None:  # what a tenant's first request pays (modules loaded already)
            build(tenants[0])
            started = time.perf_counter()
            build(tenants[1])
            first = time.perf_counter() - started
    return {"tenants": count, "start_seconds": seconds, "start_mb": kept / 1e6,
            "first_request_build_seconds": first}


def _fresh(count: int, src: Path | None) -> dict[str, Any]:
    if src is not None:
        result: dict[str, Any] = measure_baseline(__file__, src, ["--one", str(count)])
        return result
    done = subprocess.run([sys.executable, __file__, "--one", str(count), "--json"],
                          capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    add_baseline_options(parser)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one)))
        return
    rows = []
    for count in args.tenants:
        after = _fresh(count, None)
        before = _fresh(count, args.baseline_src) if args.baseline_src else None
        rows.append({"after": after, "before": before})
    if args.json:
        print(json.dumps(rows))
        return
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


if __name__ == "__main__":
    main()
