"""The tools benchmark still runs (its quick version, as a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tools.py"


def test_quick_benchmark_runs_and_reports_every_measure(tmp_path: Path) -> None:
    out = tmp_path / "tools.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--out", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "BM25 speedup, index" in done.stdout
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["quick"] is True
    assert results["store"]["files"] == 200
    assert results["grep"]["ratio_median"] > 0
    assert all(case["matches"] > 0 for case in results["grep"]["cases"])
    bm25 = results["bm25"]
    assert bm25["files"] == 200
    assert bm25["query_memdir_index_ms"] > 0 and bm25["query_rank_bm25_ms"] > 0
    # Same tokens, same formula family: the two rankings largely agree.
    assert bm25["top10_overlap_with_rank_bm25"] >= 0.6
    assert results["listing"]["entries"] > 200
    assert results["big_file"]["sections"] > 10
