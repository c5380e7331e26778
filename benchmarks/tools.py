"""Speed of the store tools against named baselines, all measured in one run.

Generates a seeded store (5,000 markdown files, about 20 MB, folders three levels
deep) in a temporary folder and reports medians over several repetitions:

- memdir ``grep`` tool vs GNU ``grep -rn`` on the same pattern (target <= 3x);
- BM25 query, memdir warm index vs rank-bm25 ``BM25Okapi.get_top_n`` on the same
  tokens (target >= 10x faster), for the bare ranking and for the whole
  ``search`` tool call (which also checks the store for changes and reads the
  best lines of each hit);
- BM25 index build, from scratch and after one file changed;
- full-tree listing: ``view /memories`` through the read set, and ``Store.walk``
  with a cold and a warm description cache (target < 100 ms);
- ``toc`` and ``section_read`` on a 1 MB file.

Usage: ``uv run python benchmarks/tools.py [--quick] [--out PATH]``. Results go
to ``benchmarks/results/tools.json`` (``tools-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rank_bm25 import BM25Okapi

from _gen import make_big_file, make_store
from memdir.store import Store
from memdir.tools._bm25index import FileIndex, index_text
from memdir.tools._memory import read_set
from memdir.tools._ranked import bm25_set

RESULTS = Path(__file__).resolve().parent / "results"


def _median_ms(fn: Callable[[], Any], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _amedian_ms(make: Callable[[], Awaitable[Any]], reps: int) -> float:
    async def run() -> float:
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            await make()
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times)

    return asyncio.run(run())


def _call(tools: Any, name: str, args: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
    async def go() -> Any:
        result = await tools.call(name, args)
        if result.is_error:
            raise RuntimeError(f"{name}({args}) failed: {result.content}")
        return result

    return go


def bench_grep(store: Store, words: list[str], reps: int) -> dict[str, Any]:
    tools = read_set(store)
    rows = []
    for word in words:
        memdir = _amedian_ms(_call(tools, "grep", {"pattern": word, "max_results": 50}), reps)
        argv = ["grep", "-rn", "--include=*.md", "-e", word, str(store.root)]
        gnu = _median_ms(lambda a=argv: subprocess.run(a, capture_output=True, check=False), reps)
        hits = subprocess.run(argv, capture_output=True, check=False).stdout.count(b"\n")
        rows.append({"pattern": word, "matches": hits, "memdir_ms": memdir, "gnu_grep_ms": gnu,
                     "ratio": memdir / gnu})
    return {"cases": rows, "ratio_median": statistics.median(r["ratio"] for r in rows),
            "target": "memdir/gnu <= 3"}


def bench_bm25(store: Store, queries: list[str], reps: int) -> dict[str, Any]:
    start = time.perf_counter()
    index = FileIndex(store)
    index.refresh()
    build_s = time.perf_counter() - start
    first = index.paths[len(index.paths) // 2]
    host = store.root / first.removeprefix("/memories/")
    host.write_text(host.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    start = time.perf_counter()
    index.refresh()
    rebuild_s = time.perf_counter() - start

    tokenize = index.tokenizer
    docs = index.paths
    start = time.perf_counter()
    corpus = [tokenize(index_text(p, (store.root / p.removeprefix("/memories/")).read_text(
        encoding="utf-8"))) for p in docs]
    rank_tokenize_s = time.perf_counter() - start
    start = time.perf_counter()
    okapi = BM25Okapi(corpus)
    rank_build_s = time.perf_counter() - start

    core, rank, tool, agree = [], [], [], []
    tools = bm25_set(store)
    index_for_tools = _call(tools, "search", {"query": queries[0], "k": 10})
    asyncio.run(index_for_tools())  # build the tools' shared index before timing
    for query in queries:
        terms = tokenize(query)
        core.append(_median_ms(lambda t=terms: index.search(t, 10), reps))
        rank.append(_median_ms(lambda t=terms: okapi.get_top_n(t, docs, n=10), reps))
        tool.append(_amedian_ms(_call(tools, "search", {"query": query, "k": 10}), reps))
        ours = [h.path for h in index.search(terms, 10)]
        theirs = okapi.get_top_n(terms, docs, n=10)
        agree.append(len(set(ours) & set(theirs)) / 10)
    core_ms, rank_ms, tool_ms = (statistics.median(x) for x in (core, rank, tool))
    return {
        "files": len(docs),
        "stemmer": index.tokenizer.stemmer,
        "index_build_s": build_s,
        "index_rebuild_after_one_edit_s": rebuild_s,
        "rank_bm25_tokenize_s": rank_tokenize_s,
        "rank_bm25_build_s": rank_build_s,
        "query_memdir_index_ms": core_ms,
        "query_memdir_search_tool_ms": tool_ms,
        "query_rank_bm25_ms": rank_ms,
        "speedup_index": rank_ms / core_ms,
        "speedup_tool": rank_ms / tool_ms,
        "top10_overlap_with_rank_bm25": statistics.mean(agree),
        "target": "rank_bm25/memdir >= 10",
    }


def bench_listing(store: Store, reps: int) -> dict[str, Any]:
    tools = read_set(store)
    view = _amedian_ms(_call(tools, "view", {"path": "/memories"}), reps)
    cold = _median_ms(lambda: Store(store.root).walk(), reps)
    warm_store = Store(store.root)
    warm_store.walk()
    warm = _median_ms(warm_store.walk, reps)
    entries = len(warm_store.walk())
    return {"entries": entries, "view_root_ms": view, "walk_cold_ms": cold,
            "walk_warm_ms": warm, "target": "< 100 ms"}


def bench_big_file(root: Path, size: int, reps: int) -> dict[str, Any]:
    big = Store(root, create=True, max_file_bytes=4 * size)
    headings = make_big_file(root / "big.md", size)
    tools = read_set(big)
    middle = headings[len(headings) // 2]
    toc = _amedian_ms(_call(tools, "toc", {"path": "/memories/big.md"}), reps)
    section = _amedian_ms(
        _call(tools, "section_read", {"path": "/memories/big.md", "heading_path": [middle]}), reps
    )
    view = _amedian_ms(
        _call(tools, "view", {"path": "/memories/big.md", "view_range": [1000, 1100]}), reps
    )
    return {"bytes": (root / "big.md").stat().st_size, "sections": len(headings),
            "toc_ms": toc, "section_read_ms": section, "view_range_ms": view}


def _queries(vocab: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pool = vocab[60:3000]  # skip the commonest words, as a searcher would
    return [" ".join(rng.sample(pool, rng.randint(2, 4))) for _ in range(n)]


def _table(results: dict[str, Any]) -> str:
    g, b, li, bf = results["grep"], results["bm25"], results["listing"], results["big_file"]
    rows = [
        ("grep: memdir tool / GNU grep -rn (median ratio)", f"{g['ratio_median']:.2f}x",
         "<= 3x"),
        ("BM25 query: memdir index", f"{b['query_memdir_index_ms']:.3f} ms", ""),
        ("BM25 query: memdir search tool (end to end)",
         f"{b['query_memdir_search_tool_ms']:.2f} ms", ""),
        ("BM25 query: rank-bm25 get_top_n", f"{b['query_rank_bm25_ms']:.2f} ms", ""),
        ("BM25 speedup, index (rank-bm25 / memdir)", f"{b['speedup_index']:.0f}x", ">= 10x"),
        ("BM25 speedup, search tool (rank-bm25 / memdir)", f"{b['speedup_tool']:.1f}x", ""),
        ("BM25 index build from scratch", f"{b['index_build_s']:.2f} s", ""),
        ("BM25 index rebuild after one edit", f"{b['index_rebuild_after_one_edit_s']:.2f} s", ""),
        ("rank-bm25 build (tokens given)", f"{b['rank_bm25_build_s']:.2f} s", ""),
        ("view /memories (read set)", f"{li['view_root_ms']:.1f} ms", "< 100 ms"),
        ("Store.walk, cold description cache", f"{li['walk_cold_ms']:.1f} ms", "< 100 ms"),
        ("Store.walk, warm", f"{li['walk_warm_ms']:.1f} ms", "< 100 ms"),
        (f"toc on {bf['bytes'] / 1e6:.1f} MB file", f"{bf['toc_ms']:.1f} ms", ""),
        (f"section_read on {bf['bytes'] / 1e6:.1f} MB file", f"{bf['section_read_ms']:.1f} ms",
         ""),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'measure':<{width}}  {'value':>12}  target", "-" * (width + 24)]
    lines += [f"{name:<{width}}  {value:>12}  {target}" for name, value, target in rows]
    for case in g["cases"]:
        lines.append(f"  grep {case['pattern']!r}: {case['matches']} lines, memdir "
                     f"{case['memdir_ms']:.1f} ms, GNU {case['gnu_grep_ms']:.1f} ms")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small store, few repetitions")
    parser.add_argument("--out", type=Path, help="where to write the JSON results")
    args = parser.parse_args(argv)
    files, total, big, reps, nq = (
        (200, 800_000, 150_000, 3, 4) if args.quick else (5000, 20_000_000, 1_000_000, 7, 20)
    )
    out = args.out or RESULTS / ("tools-quick.json" if args.quick else "tools.json")
    work = Path(tempfile.mkdtemp(prefix="memdir-bench-"))
    try:
        start = time.perf_counter()
        generated = make_store(work / "store", files=files, total_bytes=total)
        gen_s = time.perf_counter() - start
        print(f"generated {len(generated.paths)} files, {generated.total_bytes / 1e6:.1f} MB "
              f"in {gen_s:.1f} s", file=sys.stderr)
        store = Store(generated.root)
        words = [generated.vocab[i] for i in (80, 400, 2500)]
        results: dict[str, Any] = {
            "quick": args.quick,
            "machine": {"python": platform.python_version(), "platform": platform.platform()},
            "store": {"files": len(generated.paths), "bytes": generated.total_bytes},
            "grep": bench_grep(store, words, reps),
            "bm25": bench_bm25(store, _queries(generated.vocab, nq, 3), reps),
            "listing": bench_listing(store, reps),
            "big_file": bench_big_file(work / "big", big, reps),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(_table(results))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"results written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
