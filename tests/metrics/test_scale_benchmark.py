"""The scale benchmark's generator is seeded and plants what it says; the benchmark runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _gen import make_scale_store  # noqa: E402
from memdir.metrics import health_report  # noqa: E402
from memdir.store import Store  # noqa: E402


def _contents(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def test_the_same_seed_writes_the_same_store_byte_for_byte(tmp_path: Path) -> None:
    one = make_scale_store(tmp_path / "one", 150, seed=3)
    two = make_scale_store(tmp_path / "two", 150, seed=3)
    other = make_scale_store(tmp_path / "other", 150, seed=4)
    assert _contents(one.root) == _contents(two.root)
    assert _contents(one.root) != _contents(other.root)
    assert len(one.paths) == 150 and len(set(one.paths)) == 150
    assert max(f.count("/") for f in one.folders) >= 2  # nested folders
    assert 2500 < one.total_bytes / 150 < 5500  # about 4 KB a file


def test_planted_copies_and_dangling_references_are_found_by_health(tmp_path: Path) -> None:
    made = make_scale_store(tmp_path / "store", 400, seed=1, copy_share=0.05)
    assert made.duplicates and made.near_duplicates and made.dangling
    report = health_report(Store(made.root))
    flagged = {frozenset((p.a.split(" > ")[0], p.b.split(" > ")[0])) for p in report.duplicates}
    for copy, source in made.duplicates:  # a verbatim copy always reads as a duplicate
        assert frozenset((copy, source)) in flagged
    dangling = {d.path for d in report.metrics.shape.dangling}
    assert set(made.dangling) <= dangling


def test_the_benchmark_runs_and_reports_exponents_and_memory(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "scale.py"), "--sizes", "40,80", "--rows", "tree,lint",
         "--runs", "1", "--scratch", str(tmp_path / "scratch"), "--out", str(out),
         "--plot", str(tmp_path / "scale.png")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| tree | after |" in done.stdout and "exp 40-80" in done.stdout
    results = json.loads(out.read_text(encoding="utf-8"))
    for row in ("tree", "lint"):
        for size in ("40", "80"):
            timing = results["rows"][row]["after"][size]
            assert timing["seconds"] > 0 and timing["peak_mb"] > 10
    assert results["anchors"]["find + head"]["80"]["seconds"] > 0
    assert results["anchors"]["YAML header check"]["80"]["seconds"] > 0
    assert (tmp_path / "scale.png").stat().st_size > 10_000


def test_the_table_steps_probe_gives_the_tables_first_rows(tmp_path: Path) -> None:
    """The probe that times history table's steps measures what the table measures."""
    from memdir.metrics import measure_history
    from memdir.store.history import History

    made = make_scale_store(tmp_path / "store", 60, seed=2)
    done = subprocess.run([sys.executable, str(BENCH / "_scale_probes.py"), "make-history",
                           str(made.root), "4", "5"], capture_output=True, text=True, check=True)
    assert done.returncode == 0
    probe = subprocess.run([sys.executable, str(BENCH / "_scale_probes.py"), "table-steps",
                            str(made.root), "3"], capture_output=True, text=True, check=True)
    out = json.loads(probe.stdout)
    table = measure_history(History(Store(made.root))).table()
    assert out["steps"] == 3 and len(out["step_cpu"]) == 3
    assert out["rows"] == json.loads(json.dumps(table[:3]))
    assert len(table) == 4  # the probe stopped after three of the four steps


def test_the_table_steps_probe_times_each_phase_and_can_skip_b3(tmp_path: Path) -> None:
    made = make_scale_store(tmp_path / "store", 60, seed=3)
    subprocess.run([sys.executable, str(BENCH / "_scale_probes.py"), "make-history",
                    str(made.root), "3", "5"], capture_output=True, text=True, check=True)
    probe = subprocess.run([sys.executable, str(BENCH / "_scale_probes.py"), "table-steps",
                            str(made.root), "3", "--no-b3"], capture_output=True, text=True,
                           check=True)
    out = json.loads(probe.stdout)
    assert [row["b3"] for row in out["rows"]] == [None, None, None]
    assert all(row["b2"] is not None for row in out["rows"])
    assert set(out["later_phase_cpu"]) == {"tree", "panel A", "panel B", "B3"}
    assert out["later_phase_cpu"]["B3"] <= out["later_phase_cpu"]["panel B"]
