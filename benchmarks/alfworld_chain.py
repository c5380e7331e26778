"""ALFWorld full chain with the handcoded expert, offline: success per family and time.

Plays the valid_seen games in the full-chain order (seeded, family-interleaved)
with ALFWorld's handcoded expert under the study's 50-step cap, writing one
record per task into a chain folder (rerunning with the same ``--out`` resumes).
Reports success per family, the endings, wall time and the time spent in resets.

Reset speed is then measured against a baseline in the same run: ``--warm N``
re-resets the first N games of the chain, whose PDDL translations the chain
left in the on-disk cache, and compares with the same games' resets during the
chain (the cold baseline: one translation per game, nothing on disk yet).

Run: ``.venv/bin/python benchmarks/alfworld_chain.py [--limit 140] [--out DIR]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "valid_seen"


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="an ALFWorld split folder (default: ../shared/data/.../valid_seen)")
    parser.add_argument("--out", type=Path, default=None,
                        help="chain folder (default: a new temporary folder)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="PDDL translation cache folder (default: a new temporary folder)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=140, help="play the first N of the order")
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--warm", type=int, default=10,
                        help="games re-reset from the warm cache to time it (0: skip)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    return parser.parse_args()


async def _main(args: argparse.Namespace) -> dict[str, object]:
    # Imported after argument parsing: Fast Downward's translator rewrites sys.argv.
    from memdir.skills import (
        AlfworldEnv,
        ExpertPolicy,
        Trajectory,
        full_chain_order,
        list_tasks,
        order_digest,
        run_chain,
        success_by_family,
    )

    tasks = list_tasks(args.data)
    order = full_chain_order(tasks, seed=args.seed)
    chosen = order[: args.limit]
    out = args.out or Path(tempfile.mkdtemp(prefix="alfworld-chain-"))
    cache = args.cache or Path(tempfile.mkdtemp(prefix="alfworld-sas-"))
    print(f"{len(tasks)} tasks; full order digest {order_digest(order)[:16]}; "
          f"playing {len(chosen)} into {out}", flush=True)

    started = time.perf_counter()
    env = AlfworldEnv(max_steps=args.max_steps, cache_dir=cache, facts=True)
    setup_seconds = time.perf_counter() - started
    policy = ExpertPolicy(env, seed=args.seed)

    async def report(position: int, r: Trajectory) -> None:
        print(f"{position:3d} {r.family:21s} {'won ' if r.success else 'FAIL'} "
              f"{r.steps_used:2d} steps  reset {r.reset_seconds:5.1f}s  "
              f"wall {r.wall_seconds:5.1f}s  {r.ended}", flush=True)

    records = await run_chain(chosen, policy, out, env=env, seed=args.seed, after_task=report)
    chain_seconds = time.perf_counter() - started - setup_seconds

    warm: list[float] = []
    for task in chosen[: args.warm]:  # each a different game from the last: load + reset
        env.reset(task)
        warm.append(env.reset_seconds)
    cold = [r.reset_seconds for r in records[: len(warm)]]

    families = success_by_family(records)
    figures: dict[str, object] = {
        "tasks": len(records),
        "order_digest": order_digest(order),
        "success": sum(r.success for r in records),
        "by_family": {f: {"won": w, "tried": n} for f, (w, n) in families.items()},
        "endings": dict(Counter(r.ended for r in records)),
        "mean_steps_won": statistics.mean([r.steps_used for r in records if r.success] or [0]),
        "setup_seconds": round(setup_seconds, 1),
        "chain_wall_seconds": round(chain_seconds, 1),
        "sum_task_wall_seconds": round(sum(r.wall_seconds for r in records), 1),
        "sum_reset_seconds": round(sum(r.reset_seconds for r in records), 1),
        "warm_vs_cold_reset": {
            "games": len(warm),
            "cold_mean_seconds": round(statistics.mean(cold), 2) if cold else None,
            "warm_mean_seconds": round(statistics.mean(warm), 2) if warm else None,
            "ratio": round(statistics.mean(warm) / statistics.mean(cold), 3) if warm else None,
        },
    }
    return figures


def _print(figures: dict[str, object]) -> None:
    print()
    total, won = figures["tasks"], figures["success"]
    print(f"success {won}/{total}")
    for family, tally in figures["by_family"].items():
        print(f"  {family:21s} {tally['won']:3d}/{tally['tried']:3d}")
    print(f"endings {figures['endings']}; mean steps of a won episode "
          f"{figures['mean_steps_won']:.1f}")
    print(f"wall {figures['chain_wall_seconds']}s for the chain (+{figures['setup_seconds']}s "
          f"setup); resets {figures['sum_reset_seconds']}s of "
          f"{figures['sum_task_wall_seconds']}s spent in episodes")
    print(f"reset warm vs cold: {figures['warm_vs_cold_reset']}")


if __name__ == "__main__":
    arguments = _args()
    result = asyncio.run(_main(arguments))
    _print(result)
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    sys.exit(0)
