"""B3's sample: chosen by hashed unit keys, stable as a store grows, reported with its error."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from allpairs_reference import b3_all_units
from metrics_helpers import fm
from typer.testing import CliRunner

from memdir.cli import app
from memdir.metrics import Measurer, measure_history
from memdir.metrics._health import _reading
from memdir.metrics._measure import StoreMetrics
from memdir.metrics._taxonomy import _b3_error, _b3_units, _unit_hashes, measure_taxonomy
from memdir.store import Store
from memdir.store.history import History

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _gen import make_scale_store  # noqa: E402


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A generated store of 300 files (seed 1), as path -> text."""
    root = tmp_path_factory.mktemp("gen1")
    make_scale_store(root, 300, seed=1, copy_share=0.02)
    return {"/memories/" + str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md"))}


def test_within_the_budget_b3_is_main_s_exact_value(files: dict[str, str]) -> None:
    tax = Measurer().measure(files).taxonomy
    # main (fea1331) on the same generated store: 10 leaks of 1,367 units, every unit compared
    assert tax.b3_leakage == 0.0073152889539136795
    assert (tax.b3_units, tax.units_considered, len(tax.leaks)) == (1367, 1367, 10)
    assert tax.leaks[0].unit == ("/memories/thutpro/glearzearneat/raitrou-78.md > Dinner in for "
                                 "and > Tharma cexcatcex is that")
    assert tax.leaks[0].own_cosine == 0.5377194504499321
    assert tax.b3_stderr == 0.0
    assert tax.b3_interval == (tax.b3_leakage, tax.b3_leakage)


def test_sample_keeps_its_units_as_the_store_grows(files: dict[str, str]) -> None:
    keys = [u.key for u in Measurer().measure(files).tree.units]
    before, added = keys[:1000], keys[1000:1100]
    old = set(_b3_units(before, 10**6, 0, seed=3, sample=200).tolist())
    grown = before + added
    new = set(_b3_units(grown, 10**6, 0, seed=3, sample=200).tolist())
    # a unit leaves the sample only for a newcomer of smaller hash
    assert new - old <= set(range(1000, 1100))
    assert len(old - new) == len(new - old)
    assert 0 < len(new - old) < 100
    # the units ranked by hash alone: reordering the keys moves no unit out of the sample
    shuffled = grown[::-1]
    back = {len(grown) - 1 - k for k in _b3_units(shuffled, 10**6, 0, seed=3, sample=200)}
    assert back == new
    other = set(_b3_units(grown, 10**6, 0, seed=4, sample=200).tolist())
    assert other != new and len(other) == 200


def test_the_budget_sets_the_sample_size() -> None:
    keys = [f"/memories/f{k}.md > part" for k in range(5000)]
    assert len(_b3_units(keys, 100, 500_000, seed=0)) == 5000  # 5,000 x 100 fits
    assert len(_b3_units(keys, 400, 500_000, seed=0)) == 1250  # the budget's share
    assert len(_b3_units(keys, 4000, 500_000, seed=0)) == 1000  # B3_MIN_SAMPLE
    assert len(_b3_units(keys, 4000, 500_000, seed=0, sample=6000)) == 5000
    chosen = _b3_units(keys, 4000, 500_000, seed=0)
    hashes = _unit_hashes(keys, 0)
    assert hashes[chosen].max() < np.delete(hashes, chosen).min()  # the smallest hashes


def test_error_of_a_sampled_share() -> None:
    stderr, (low, high) = _b3_error(0.006, 1000, 46085)
    assert stderr == pytest.approx(math.sqrt(0.006 * 0.994 / 1000 * 45085 / 46084), rel=1e-12)
    assert stderr == pytest.approx(0.002415, abs=1e-6)
    assert low == pytest.approx(0.002775, abs=1e-6)  # Wilson, n = 1000 * 46084 / 45085
    assert high == pytest.approx(0.012924, abs=1e-6)
    assert low < 0.006 < high
    none_seen, (zero, upper) = _b3_error(0.0, 1000, 46085)
    assert none_seen == 0.0 and zero == 0.0 and upper == pytest.approx(0.003744, abs=1e-6)
    assert _b3_error(0.25, 400, 400) == (0.0, (0.25, 0.25))


def test_sampled_b3_is_seeded_and_reported(files: dict[str, str]) -> None:
    measurer = Measurer()
    metrics = measurer.measure(files)
    exact = b3_all_units(metrics.tree)
    assert exact is not None
    one = measure_taxonomy(metrics.tree, b3_sample=400, seed=5)
    two = measure_taxonomy(metrics.tree, b3_sample=400, seed=5)
    assert one.b3_units == 400 < one.units_considered
    assert one.to_dict() == two.to_dict()
    assert one.b3_stderr is not None and one.b3_interval is not None
    assert one.b3_stderr > 0
    low, high = one.b3_interval
    assert one.b3_leakage is not None and low < one.b3_leakage < high
    assert abs(one.b3_leakage - exact) <= 4 * max(one.b3_stderr, 0.005)
    every = {leak.unit for leak in measure_taxonomy(metrics.tree).leaks}
    assert {leak.unit for leak in one.leaks} <= every
    assert one.to_dict()["b3_interval"] == (low, high)
    sampled = StoreMetrics(metrics.shape, one, metrics.tree)
    line = next(x for x in _reading(sampled) if "B3" in x)
    assert line == (f"{one.b3_leakage:.1%} of units read closer to another sibling group than "
                    f"to their own (B3 scope leakage; a seeded sample of 400 of "
                    f"{one.units_considered:,} units, 95% interval {low:.1%} to {high:.1%}).")
    line = next(x for x in _reading(metrics) if "B3" in x)
    assert line == (f"{metrics.taxonomy.b3_leakage:.1%} of units read closer to another sibling "
                    "group than to their own (B3 scope leakage).")


def _grown(root: Path) -> History:
    store = Store(root / "memories", create=True)
    history = History(store)
    history.init()
    topics = ("tea kettle boil leaves", "river boat paddle current", "garden soil seed bloom")
    for step in range(3):
        for k in range(4):
            body = "\n\n".join(f"## Part {j}\n\n{topics[(j + k) % 3]} note {step} {j} "
                               f"{topics[j % 3]} and more words here" for j in range(3))
            store.create(f"/memories/s{step}/f{k}.md", fm(f"f{k}", topics[k % 3]) + body + "\n")
        history.snapshot(f"step {step}")
    return history


def test_table_reports_the_sample_and_its_error(tmp_path: Path) -> None:
    history = _grown(tmp_path)
    exact = measure_history(history).table()
    assert [row["b3_se"] for row in exact] == [0.0, 0.0, 0.0]
    sampled = measure_history(history, measurer=Measurer(b3_sample=10)).table()
    units = [r.metrics.taxonomy for r in measure_history(
        history, measurer=Measurer(b3_sample=10)).rows]
    assert [t.b3_units for t in units] == [10, 10, 10]
    assert all(t.units_considered > 10 for t in units)
    se = [row["b3_se"] for row in sampled]
    assert all(isinstance(v, float) and v >= 0.0 for v in se)
    assert [row["b3_se"] for row in sampled] == [t.b3_stderr for t in units]
    shown = CliRunner().invoke(app, ["history", str(history.root), "table", "--csv",
                                     "--b3-sample", "10"])
    assert shown.exit_code == 0, shown.output
    header, *rows = shown.stdout.strip().splitlines()
    column = header.split(",").index("b3_se")
    assert len(rows) == 3
    assert [float(r.split(",")[column]) for r in rows] == \
        pytest.approx([round(float(v), 3) for v in se], abs=1e-3)
