"""Benchmark ``memdir browse`` pages on a 5,000-file store and a 140-step history.

Builds, from a fixed seed, a store of 5,000 files (benchmarks/_gen.py) and the
140-snapshot history of benchmarks/health.py, serves each with the browser app on a
loopback port (uvicorn, as ``memdir browse`` does) and times each page over HTTP:
the first request (cold: files parsed, search indexes built) and the median of the
next ones (warm). The history's growth table is measured in a background thread
the first history page starts; its time to ready is reported on its own. The
baseline, measured in the same run, is ``memdir tree`` on the same store: in
process (the listing and drawing work, comparable to a page) and as a new process
(what a person waits for at the prompt).

The target: every warm page renders in under 300 ms.

Usage: ``.venv/bin/python benchmarks/browse.py [--files 5000] [--steps 140] [--repeat 7]
[--quick] [--out results.json]``
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from typer.testing import CliRunner

from _gen import make_store
from health import build_history
from memdir.browse import browse_app, open_target
from memdir.cli import app as cli_app
from memdir.store import Store

TARGET_MS = 300.0


@contextmanager
def served(root: Path) -> Iterator[httpx.Client]:
    """The browser app for ``root`` on a loopback port, and a client that carries its token."""
    token = secrets.token_urlsafe(16)
    config = uvicorn.Config(browse_app(open_target(root), token=token), host="127.0.0.1",
                            port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600,
                          headers={"Authorization": f"Bearer {token}"})
    try:
        yield client
    finally:
        client.close()
        server.should_exit = True
        thread.join(timeout=10)


def time_ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def page(client: httpx.Client, path: str, repeat: int) -> dict[str, float | int | str]:
    """Cold (first) and warm (median of the rest) times of one page, and its size."""
    sizes: list[int] = []

    def fetch() -> None:
        response = client.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"{path}: HTTP {response.status_code}: {response.text[:300]}")
        sizes.append(len(response.content))

    cold = time_ms(fetch)
    warm = [time_ms(fetch) for _ in range(repeat)]
    return {"path": path, "cold_ms": round(cold, 1), "warm_ms": round(statistics.median(warm), 1),
            "bytes": sizes[-1]}


def wait_for_growth(client: httpx.Client) -> None:
    """Open the history page, then poll until its growth curves are measured."""
    while "Measuring the growth curves" in client.get("/s/store/history").text:
        time.sleep(0.2)


def tree_baseline(root: Path, repeat: int) -> dict[str, float]:
    """``memdir tree`` on the store: in process (median) and as a new process (one run)."""
    runner = CliRunner()

    def run() -> None:
        result = runner.invoke(cli_app, ["tree", str(root)])
        if result.exit_code != 0:
            raise RuntimeError(result.output[-500:])

    run()  # warm the file cache, as the pages' warm runs are
    in_process = statistics.median(time_ms(run) for _ in range(repeat))
    command = time_ms(lambda: subprocess.run(
        [sys.executable, "-m", "memdir", "tree", str(root)], check=True,
        stdout=subprocess.DEVNULL))
    return {"in_process_ms": round(in_process, 1), "new_process_ms": round(command, 1)}


def report(label: str, pages: list[dict[str, float | int | str]], tree_ms: float) -> None:
    print(f"\n{label}")
    print(f"  {'page':58} {'cold ms':>9} {'warm ms':>9} {'x tree':>7} {'KB':>7}  target")
    for p in pages:
        warm = float(p["warm_ms"])
        verdict = "ok" if warm < TARGET_MS else "SLOW"
        print(f"  {str(p['path'])[:58]:58} {p['cold_ms']:>9} {warm:>9} "
              f"{warm / tree_ms:>7.2f} {int(p['bytes']) / 1024:>7.1f}  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--steps", type=int, default=140)
    parser.add_argument("--kb", type=int, default=612, help="final size of the history's store")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="300 files, 20 steps, 3 repeats")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.files, args.steps, args.repeat, args.kb = 300, 20, 3, 120
    results: dict[str, object] = {"quick": args.quick, "target_ms": TARGET_MS}
    with tempfile.TemporaryDirectory(prefix="memdir-browse-bench-") as scratch:
        big = make_store(Path(scratch) / "big", args.files, total_bytes=args.files * 4000,
                         seed=args.seed)
        store = Store(big.root)
        files = store.files()
        some = files[len(files) // 2].removeprefix("/memories/")
        word = big.vocab[40]
        folder = files[0].removeprefix("/memories/").split("/")[0]
        baseline = tree_baseline(big.root, args.repeat)
        with served(big.root) as client:
            big_pages = [page(client, p, args.repeat) for p in (
                "/s/store/", f"/s/store/?q={folder}", f"/s/store/file/{some}",
                f"/s/store/file/{some}?view=lines&lines=5-9",
                f"/s/store/search?q={word}", f"/s/store/search?q={word}+{big.vocab[41]}"
                "&mode=ranked",
            )]
        history = build_history(Path(scratch) / "history" / "memories", args.seed, args.kb,
                                args.steps)
        steps = history.steps()
        last = history.store.files()[-1].removeprefix("/memories/")
        history_tree = tree_baseline(history.store.root, args.repeat)
        with served(history.store.root) as client:
            growth = time_ms(lambda: wait_for_growth(client))
            history_pages = [page(client, p, args.repeat) for p in (
                "/s/store/history", f"/s/store/history?step={len(steps) // 2}",
                "/s/store/history?step=1", f"/s/store/file/{last}?step={len(steps) - 1}",
            )]
    results["store"] = {"files": len(files), "bytes": big.total_bytes, "tree": baseline,
                        "pages": big_pages}
    results["history"] = {"steps": len(steps), "tree": history_tree, "pages": history_pages,
                          "growth_ready_ms": round(growth, 1)}
    print(f"memdir tree, {len(files)}-file store: {baseline['in_process_ms']} ms in process, "
          f"{baseline['new_process_ms']} ms as a new process")
    report(f"pages of the {len(files)}-file store (x tree = warm page / memdir tree in process)",
           big_pages, baseline["in_process_ms"])
    print(f"\nmemdir tree, history's final store: {history_tree['in_process_ms']} ms in process")
    print(f"growth curves measured in the background, ready after {growth / 1000:.1f} s "
          "(pages render meanwhile, showing the progress)")
    report(f"pages of the {len(steps)}-step history", history_pages,
           history_tree["in_process_ms"])
    every = big_pages + history_pages
    results["all_warm_under_target"] = all(float(p["warm_ms"]) < TARGET_MS for p in every)
    print(f"\nevery warm page under {TARGET_MS:.0f} ms: {results['all_warm_under_target']}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
