"""toc and section_read on a file of 70,000 headings, against reading the same file.

Builds one memory file with ``--headings`` headings (levels 1 to 6 in turn, a
line of text under each) and times, best of ``--repeats``: reading the file
through the store (the baseline, measured in the same run), ``toc``, a
``section_read`` of the last heading, and a ``section_read`` that matches
nothing (its error lists headings). Each is reported in milliseconds and as a
ratio to the read. With ``--baseline-src`` the same measurement runs on another
source tree (e.g. the worktree of an older commit) in a subprocess, in the same
run, and is shown beside it.

Run: ``.venv/bin/python benchmarks/outline.py [--headings 70000] [--baseline-src ../wt-old/src]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _baseline import add_baseline_options, measure_baseline

FRONT = "---\nname: heads\ndescription: many headings\n---\n"


def _best(act: Callable[[], object], repeats: int) -> tuple[float, int]:
    """Best wall time in ms over ``repeats`` runs, and the length of the last answer."""
    best, size = float("inf"), 0
    for _ in range(repeats):
        started = time.perf_counter()
        answer = act()
        best = min(best, (time.perf_counter() - started) * 1000)
        size = len(str(answer))
    return best, size


def _answer(call: Callable[[], Awaitable[str]]) -> str:
    try:
        return asyncio.run(call())
    except Exception as exc:  # noqa: BLE001 - a miss is a tool error; its text is the answer
        return str(exc)


def measure(headings: int, repeats: int) -> dict[str, tuple[float, int]]:
    """Milliseconds and answer length per operation."""
    from memdir.store import Store
    from memdir.tools._outline import section_read_tool, toc_tool

    with tempfile.TemporaryDirectory(prefix="memdir-outline-") as tmp:
        store = Store(Path(tmp) / "s", create=True)
        body = "".join(f"{'#' * (1 + n % 6)} Heading {n}\ntext {n}\n" for n in range(headings))
        (store.root / "heads.md").write_text(FRONT + body)
        toc, section = toc_tool(store), section_read_tool(store)
        path = "/memories/heads.md"
        return {
            "read the file (baseline)": _best(lambda: store.read(path), repeats),
            "toc": _best(lambda: _answer(lambda: toc(path=path)), repeats),
            "section_read, last heading": _best(
                lambda: _answer(lambda: section(path=path,
                                                heading_path=[f"Heading {headings - 1}"])),
                repeats),
            "section_read, no match": _best(
                lambda: _answer(lambda: section(path=path, heading_path=["Nowhere"])), repeats),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--headings", type=int, default=70_000)
    parser.add_argument("--repeats", type=int, default=3)
    add_baseline_options(parser)
    args = parser.parse_args()
    now = measure(args.headings, args.repeats)
    if args.json:
        print(json.dumps(now))
        return
    before = measure_baseline(__file__, args.baseline_src,
                              ["--headings", str(args.headings), "--repeats", str(args.repeats)])
    read_now = now["read the file (baseline)"][0]
    print(f"{args.headings:,} headings, best of {args.repeats}")
    head = f"{'operation':<28}{'ms':>10}{'x read':>9}{'chars':>11}"
    if before:
        head += f"{'before ms':>12}{'x read':>9}{'chars':>11}"
    print(head)
    for name, (ms, size) in now.items():
        row = f"{name:<28}{ms:>10.1f}{ms / read_now:>9.1f}{size:>11,}"
        if before:
            old_ms, old_size = before[name]
            read_before = before["read the file (baseline)"][0]
            row += f"{old_ms:>12.1f}{old_ms / read_before:>9.1f}{old_size:>11,}"
        print(row)


if __name__ == "__main__":
    main()
