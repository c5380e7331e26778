"""The red-team benchmark's machinery still runs: one small attack, this checkout only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "redteam.py"


def test_one_attack_runs_in_a_capped_child_and_lands_in_the_table(tmp_path: Path) -> None:
    out = tmp_path / "redteam.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--tree", f"after={REPO}", "--only", "8",
         "--out", str(out)],
        capture_output=True, text=True, timeout=240, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    child = results["items"]["8"]["after"]["attack"]["run"]
    # The attack ran as a child under the caps and reported what it saw as JSON.
    assert child["exit"] == 0 and child["peak_rss_mib"] > 0
    assert child["saw"]["dir/y.txt intact"] is True
    row = next(line for line in results["table"].splitlines() if "dir /" in line)
    assert row.startswith("| 8 |") and row.endswith("| pass |"), row
    assert row in done.stdout


def test_an_unknown_attack_is_refused_with_the_names_to_choose_from() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--only", "11"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "unknown attack(s) ['11']" in done.stderr and "r1-race" in done.stderr
