"""The episode-log variant with the handcoded expert over full and three chains, offline.

Runs the skill-setting cells ``full-chain.episode_log_recent.exec-expert`` and
``three-chain.episode_log_recent.exec-expert`` (or, with ``--retriever MODEL``,
the retriever-served ``episode_log`` cells) through the same runner the CLI uses
(retrieval before each task, one episode file appended and one git snapshot
after it, audits per task), then writes the report from the records. Reports
success per family per protocol, wall time, time in resets, time in the memory
work (retrieval, integration, snapshot, audit), the store's final size and
shape (Panel A from memdir.metrics); the
memory overhead is given as a ratio to the game time measured in the same run.

Rerunning with the same ``--out`` resumes. Run:
``.venv/bin/python benchmarks/skills_episode_log.py --out DIR [--limit N] [--json FILE]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "valid_seen"


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, required=True, help="the run folder (resumable)")
    parser.add_argument("--cache", type=Path, default=None, help="PDDL translation cache")
    parser.add_argument("--protocols", nargs="+", default=["full-chain", "three-chain"])
    parser.add_argument("--limit", type=int, default=None, help="first N tasks of each chain")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--retriever", default=None,
                        help="serve the log by this retriever (episode_log), e.g. "
                             "memdir/grep-reader; default: the fixed rule (episode_log_recent)")
    return parser.parse_args()


def _shape(root: Path) -> dict[str, object]:
    """Panel A of a final store (memdir.metrics), with the time it took to measure."""
    from memdir.metrics import measure_store
    from memdir.store import Store

    began = time.perf_counter()
    shape = measure_store(Store(root)).shape.to_dict()
    keep = ("folders", "files", "sections", "bytes", "mean_leaf_depth", "max_depth")
    found: dict[str, object] = {k: shape[k] for k in keep if k in shape}
    found["measure_seconds"] = round(time.perf_counter() - began, 2)
    return found


async def _main(args: argparse.Namespace) -> dict[str, object]:
    from memdir.skills import (
        AlfworldEnv,
        RunConfig,
        alfworld_missing,
        build_report,
        list_tasks,
        load_run,
        run_cell,
    )

    missing = alfworld_missing()
    if missing is not None:
        sys.exit(f"cannot run: {missing}")
    variant = "episode_log_recent" if args.retriever is None else "episode_log"
    config = RunConfig(name="episode-log-expert", data=args.data, output=args.out,
                       protocols=args.protocols, variants=[variant], limit=args.limit,
                       cache_dir=args.cache, retriever=args.retriever or "memdir/grep-reader")
    tasks = list_tasks(config.split())
    env = AlfworldEnv(max_steps=config.max_steps, cache_dir=config.cache_dir, facts=True)
    figures: dict[str, object] = {}
    for cell in config.cells():
        began = time.perf_counter()
        await run_cell(config, cell, tasks, env)
        figures[cell.key] = {"wall_seconds_this_process": round(time.perf_counter() - began, 1)}
    build_report(config.output)
    for report in load_run(config.output):
        steps = report.steps
        families: dict[str, list[int]] = {}
        for s in steps:
            won, tried = families.get(s.family, [0, 0])
            families[s.family] = [won + s.success, tried + 1]
        game = sum(s.episode_seconds for s in steps)
        memory = sum(s.memory_seconds for s in steps)
        entry = figures.setdefault(report.cell.key, {})
        assert isinstance(entry, dict)
        entry.update({
            "success": f"{sum(s.success for s in steps)} / {len(steps)}",
            "per_family": {f: f"{w} / {n}" for f, (w, n) in families.items()},
            "game_seconds": round(game, 1),
            "reset_seconds": round(sum(s.reset_seconds for s in steps), 1),
            "memory_seconds": round(memory, 1),
            "memory_to_game_ratio": round(memory / game, 4) if game else None,
            "final_store": {name: (chain[-1].store_files, chain[-1].store_bytes)
                            for name, chain in report.chains.items() if chain},
            "audit_findings": sum(c[-1].schema_findings + c[-1].gate_findings
                                  for c in report.chains.values() if c),
            "final_shape": {name: _shape(config.output / report.cell.key / name / "store")
                            for name in report.chains},
        })
    return figures


def main() -> None:
    """Run the cells and print the figures."""
    args = _args()
    figures = asyncio.run(_main(args))
    text = json.dumps(figures, indent=1)
    print(text)
    if args.json is not None:
        args.json.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
