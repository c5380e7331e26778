"""The alarms of main's health code beside this checkout's, on the scale benchmark's stores.

Runs ``memdir health --json`` on a generated store (``_gen.make_scale_store``,
the same store ``scale.py`` measures) twice, with this checkout's code and with the
code of ``--before SRC``, and reports for each alarm kind how many the old code
raised, how many of those the new code raises too (recall), and how many it adds;
and every Panel A and Panel B value side by side.

Run: ``nice uv run --no-sync python benchmarks/health_recall.py --files 1000
--before /path/to/main/src``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale import prepare_store  # noqa: E402


def health(src: Path, root: Path) -> dict[str, Any]:
    """``memdir health --json`` of ``root`` with the code in ``src``."""
    env = dict(os.environ, PYTHONPATH=str(src.resolve()))
    done = subprocess.run([sys.executable, "-m", "memdir", "health", str(root), "--json"],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"health with {src} exited {done.returncode}: {done.stderr[-500:]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _sets(report: dict[str, Any]) -> dict[str, set[Any]]:
    return {
        "near-duplicate": {(d["a"], d["b"]) for d in report["duplicates"]},
        "stale description": {d["path"] for d in report["stale_descriptions"]},
        "conflicting values": {(f["path"], f["subject"]) for f in report["stale_facts"]},
        "dangling reference": {(d["path"], d["line"]) for d in report["shape"]["dangling"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--scratch", type=Path, default=Path("/work/scratch/growth-scan"))
    args = parser.parse_args()
    store = prepare_store(args.files, args.scratch, args.seed)
    old = health(args.before, store.root)
    new = health(HERE.parent / "src", store.root)
    print(f"{args.files} files ({store.root})\n")
    print("| alarm | before | after | before also after | recall | added |")
    print("|---|---|---|---|---|---|")
    for kind, was in _sets(old).items():
        now = _sets(new)[kind]
        recall = len(was & now) / len(was) if was else 1.0
        print(f"| {kind} | {len(was)} | {len(now)} | {len(was & now)} | {recall:.3f} | "
              f"{len(now - was)} |")
    print("\n| value | before | after |\n|---|---|---|")
    for panel in ("shape", "taxonomy"):
        for key, value in old[panel].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                print(f"| {panel}.{key} | {value:.6g} | {new[panel].get(key, float('nan')):.6g} |")
            elif value is None or new[panel].get(key) is None:
                print(f"| {panel}.{key} | {value} | {new[panel].get(key)} |")
    worst = old["taxonomy"]["b1_worst_pair"], new["taxonomy"]["b1_worst_pair"]
    print(f"\nB1 worst pair the same: {worst[0] == worst[1]}")


if __name__ == "__main__":
    main()
