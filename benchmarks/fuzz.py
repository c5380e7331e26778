"""The fuzzing suite at length: malformed calls per surface, with the counts that matter.

Runs the calls of ``tests/fuzz`` (the same hypothesis strategies, derandomized,
so every run and both code bases get the same calls) through every surface a
model's call comes in by: each tool set's ``ToolSet.call``, the Anthropic
memory tool adapter under both profiles, and ``memdir serve`` over stdio and
over HTTP (a real subprocess: the MCP SDK's client for the calls it can send,
raw JSON-RPC for the bytes it cannot), and prints per surface:

- calls sent, calls that raised (in process) or were answered "Internal server
  error" / broke the connection (over MCP), calls over their time limit (plus
  2 s of slack), results that broke the result contract (not UTF-8, over the cap);
- peak memory: in process, the most Python memory one call allocated
  (``tracemalloc``); over MCP, the server's peak resident memory (``VmHWM``, with
  its resident memory after start-up beside it).

With ``--baseline-src`` the same calls are sent to other code (e.g. the ``src/``
of a worktree of ``main``) in a subprocess, and both tables are printed.

Usage::

    uv run --no-sync python benchmarks/fuzz.py [--examples 400] [--mcp-examples 200]
        [--baseline-src ../main/src] [--only toolset,adapter,mcp]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from _baseline import add_baseline_options, measure_baseline

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import fuzzcalls  # noqa: E402
import fuzzrun  # noqa: E402

_QUIET = list(HealthCheck)


def _counting(examples: int) -> settings:
    """The heavy profile's shape, with generation only: a raise is counted, never shrunk."""
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=_QUIET, phases=[Phase.explicit, Phase.generate],
                    print_blob=False)


def _count(surface: fuzzrun.Surface, calls: Any, examples: int) -> dict[str, Any]:
    """Send ``examples`` generated calls through ``surface``; its tally as a row."""

    @_counting(examples)
    @given(call=calls)
    def run(call: fuzzcalls.Call) -> None:
        surface.send(call)

    run()
    row = surface.tally.row()
    print(f"  {row}", file=sys.stderr)
    return row


def _run_toolsets(store_root: Path, examples: int, runner: asyncio.Runner) -> list[dict[str, Any]]:
    from memdir.store import Store
    from memdir.tools import TOOLSET_NAMES, SandboxUnavailableError

    rows = []
    for name in TOOLSET_NAMES:
        try:
            surface, toolset = fuzzrun.toolset_surface(name, Store(store_root), runner)
        except SandboxUnavailableError:
            rows.append({"surface": f"toolset {name}", "skipped": "no confinement"})
            continue
        calls = fuzzcalls.calls_for(toolset, fuzzrun.known_paths(store_root))
        rows.append(_count(surface, calls, examples // 4 if name.startswith("shell")
                           else examples))
    return rows


def _run_adapter(store_root: Path, examples: int, runner: asyncio.Runner) -> list[dict[str, Any]]:
    from memdir.store import Store

    rows = []
    for profile in ("anthropic", "memdir"):
        surface = fuzzrun.adapter_surface(profile, Store(store_root), runner)
        inputs = fuzzcalls.adapter_inputs(fuzzrun.known_paths(store_root))
        rows.append(_count(surface, inputs.map(lambda data: fuzzcalls.Call("memory", data,
                                                                          "mapping")),
                           examples))
    return rows


def _run_mcp(store_root: Path, examples: int) -> list[dict[str, Any]]:
    import mcpfuzz

    rows = []
    loop = mcpfuzz.Loop()
    try:
        for transport in ("stdio", "http"):
            for toolset in ("read", "write", "anthropic"):
                surface, server = mcpfuzz.mcp_surface(loop, store_root, transport, toolset)
                try:
                    calls = mcpfuzz.calls_for_server(server, fuzzrun.known_paths(store_root))
                    row = _count(surface, calls, examples)
                finally:
                    memory = server.stop()
                row["peak_mb"] = memory["peak_rss_mb"]
                row["start_mb"] = memory["start_rss_mb"]
                rows.append(row)
    finally:
        loop.close()
    return rows


def measure(examples: int, mcp_examples: int, only: set[str]) -> dict[str, Any]:
    """Every surface's counts, over a fresh sample store per group of surfaces."""
    from memdir.sample import build_sample_store

    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, asyncio.Runner() as runner:
        tracemalloc.start()
        if "toolset" in only:
            root = Path(tmp) / "toolsets"
            build_sample_store(root)
            rows += _run_toolsets(root, examples, runner)
        if "adapter" in only:
            root = Path(tmp) / "adapter"
            build_sample_store(root)
            rows += _run_adapter(root, examples, runner)
        tracemalloc.stop()
        if "mcp" in only:
            root = Path(tmp) / "mcp"
            build_sample_store(root)
            rows += _run_mcp(root, mcp_examples)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rows": rows, "process_peak_rss_mb": round(rss_mb, 1),
            "seconds": round(time.monotonic() - started, 1)}


_COLUMNS = ("calls", "raises", "over_time", "bad_results", "peak_mb", "slowest_s")


def _table(title: str, result: dict[str, Any]) -> str:
    lines = [title, f"{'surface':<26}" + "".join(f"{c:>12}" for c in _COLUMNS)
             + "  (peak_mb: one call's Python peak in process; server VmHWM over MCP)"]
    totals = dict.fromkeys(_COLUMNS[:4], 0)
    for row in result["rows"]:
        if "skipped" in row:
            lines.append(f"{row['surface']:<26}  skipped: {row['skipped']}")
            continue
        start = f"  (after start-up {row['start_mb']} MB)" if "start_mb" in row else ""
        lines.append(f"{row['surface']:<26}" + "".join(f"{row[c]:>12}" for c in _COLUMNS)
                     + start)
        for c in totals:
            totals[c] += row[c]
    lines.append(f"{'total':<26}" + "".join(f"{totals[c]:>12}" for c in _COLUMNS[:4]))
    lines.append(f"peak RSS of this process: {result['process_peak_rss_mb']} MB; "
                 f"{result['seconds']} s")
    raised: dict[str, int] = {}
    for row in result["rows"]:
        for key, n in row.get("raised", {}).items():
            raised[f"{row['surface']}: {key}"] = n
    if raised:
        lines.append("raised: " + "; ".join(f"{k} x{n}" for k, n in sorted(raised.items())))
        firsts = {key: text for row in result["rows"] for key, text in row.get("first", {}).items()}
        for key, text in sorted(firsts.items()):
            lines.append(f"  first {key}: {text[:160]}")
    broken: dict[str, int] = {}
    for row in result["rows"]:
        for key, n in row.get("broken", {}).items():
            broken[key] = broken.get(key, 0) + n
    if broken:
        lines.append("bad results: " + "; ".join(f"{k} x{n}" for k, n in sorted(broken.items())))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=400,
                        help="calls per in-process surface (a shell set gets a quarter)")
    parser.add_argument("--mcp-examples", type=int, default=150,
                        help="calls per MCP server (transport x tool set)")
    parser.add_argument("--only", default="toolset,adapter,mcp",
                        help="comma-separated surfaces: toolset, adapter, mcp")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    add_baseline_options(parser)
    args = parser.parse_args()
    only = set(args.only.split(","))
    forwarded = ["--examples", str(args.examples), "--mcp-examples", str(args.mcp_examples),
                 "--only", args.only]
    baseline = measure_baseline(__file__, args.baseline_src, forwarded)
    result = measure(args.examples, args.mcp_examples, only)
    if args.json:
        print(json.dumps(result))
        return
    if baseline is not None:
        print(_table(f"before: {args.baseline_src}", baseline))
        print()
    print(_table("after: this tree", result))
    if args.out is not None:
        args.out.write_text(json.dumps({"after": result, "before": baseline}, indent=2))


if __name__ == "__main__":
    main()
