"""Panel B of a history's steps, each from the last, equals each step measured whole.

``TaxonomySteps`` (what ``measure_history`` measures Panel B with) re-weights the
rows a step changed, sums their groups again and compares in B3 only what they
touched; ``NearestOtherSteps`` keeps B3's comparisons between states. These
tests drive both through generated states (appended lines, as the benchmark's
history makes, edits, additions and deletions) and compare every state with
``measure_taxonomy`` / ``nearest_other`` on the same term caches, to the bit.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_helpers import fm
from scipy import sparse

from memdir.metrics import Measurer, measure_history, measure_taxonomy
from memdir.metrics._b3 import NearestOtherSteps, nearest_other, replace_rows
from memdir.metrics._measure import _digest
from memdir.metrics._steps import TaxonomySteps
from memdir.metrics._taxonomy import _EPS, _group_sums
from memdir.metrics._text import TfidfCache
from memdir.store import Store
from memdir.store.history import History

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _gen import make_scale_store  # noqa: E402

WORDS = ("nurse", "porto", "garden", "tennis", "harbour", "violin", "budget", "meeting",
         "recipe", "lisbon", "note", "ferry", "market", "piano")


def _stepping(measurer: Measurer) -> TaxonomySteps:
    """Give ``measurer`` a :class:`TaxonomySteps` on its caches, as ``measure_history`` does."""
    measurer.steps = TaxonomySteps(
        units_cache=measurer.units_cache, labels_cache=measurer.labels_cache,
        min_chars=measurer.min_chars, max_pairs=measurer.max_pairs, seed=measurer.seed,
        b3_sample=measurer.b3_sample)
    return measurer.steps


def _assert_whole(measurer: Measurer, files: dict[str, str]) -> None:
    """The state measured in turn equals ``measure_taxonomy`` on its tree, to the bit."""
    got = measurer.measure_summaries(
        {p: measurer.summary(_digest(t), t) for p, t in files.items()})
    whole = measure_taxonomy(got.tree, units_cache=measurer.units_cache,
                             labels_cache=measurer.labels_cache, min_chars=measurer.min_chars,
                             max_pairs=measurer.max_pairs, seed=measurer.seed,
                             b3_sample=measurer.b3_sample)
    assert got.taxonomy.to_dict() == whole.to_dict()


def _text(rng: random.Random) -> str:
    out = fm("n", rng.choice(["Notes", "A trip to Porto", ""]))
    out += " ".join(rng.choices(WORDS, k=rng.randint(0, 14))) + "\n"
    for _ in range(rng.randint(0, 3)):
        out += f"# {rng.choice(['Work', 'Home', 'Porto'])}\n"
        out += " ".join(rng.choices(WORDS, k=rng.randint(3, 14))) + "\n"
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), sample=st.sampled_from([None, 3, 8]))
def test_steps_equal_whole_measurements(seed: int, sample: int | None) -> None:
    """Appended lines (most steps), edits, additions and deletions, in random order."""
    rng = random.Random(seed)
    state = {f"/memories/{d}f{k}.md": _text(rng)
             for k, d in enumerate(["", "x/", "x/", "y/", "", "x/z/"])}
    measurer = Measurer(b3_sample=sample)
    _stepping(measurer)
    _assert_whole(measurer, state)
    for step in range(12):
        action = rng.choice(["append"] * 6 + ["edit", "add", "delete"])
        path = rng.choice(sorted(state))
        if action == "append":
            state[path] += f"\n{rng.choice(WORDS)} {rng.choice(WORDS)} {step}{step}\n"
        elif action == "edit":
            state[path] = _text(rng)
        elif action == "add":
            state[f"/memories/new{step}.md"] = _text(rng)
        elif len(state) > 1:
            del state[path]
        _assert_whole(measurer, state)


def test_a_benchmark_store_history_is_measured_from_step_to_step(tmp_path: Path) -> None:
    """A generated store and the benchmark's edits: one to four appended notes a step."""
    made = make_scale_store(tmp_path / "s", 150, mean_bytes=1500, seed=4)
    store = Store(made.root)
    paths = sorted(n.virtual for n in store.tree() if n.kind == "memory")
    state = {p: store.read(p) for p in paths}
    measurer = Measurer(b3_sample=40)
    steps = _stepping(measurer)
    rng = random.Random(3)
    for step in range(15):
        for _ in range(rng.randint(1, 4)):
            path = rng.choice(paths)
            state[path] += f"\nnote {step}\n"
        _assert_whole(measurer, state)
    # Some steps were measured from the last (in so small a store a note often reorders
    # the terms most groups hold, B3's head, and the step is then compared whole).
    assert steps.b3.whole < 15
    assert steps.b3.compared < 40 * 15


def test_measure_history_measures_panel_b_from_step_to_step(tmp_path: Path) -> None:
    store = Store(tmp_path)
    history = History(store)
    history.init()
    for k in range(6):
        store.write(f"/memories/n{k % 3}.md",
                    fm("n", "Notes") + f"# Work\nnurse porto garden {k}\n# Home\nviolin {k}{k}\n")
        history.snapshot(f"step {k}")
    measurer = Measurer()
    seen: list[object] = []
    inner = TaxonomySteps.measure

    def measure(self: TaxonomySteps, tree: object) -> object:
        seen.append(self)
        return inner(self, tree)  # type: ignore[arg-type]

    TaxonomySteps.measure = measure  # type: ignore[method-assign, assignment]
    try:
        trajectory = measure_history(history, measurer=measurer)
    finally:
        TaxonomySteps.measure = inner  # type: ignore[method-assign]
    assert len(seen) == 6 and len(set(map(id, seen))) == 1
    assert measurer.steps is None  # lent for the run only
    for row in trajectory.rows:
        whole = Measurer().measure(history.read_state(row.step.index))
        assert row.flat()["b3"] == whole.taxonomy.b3_leakage
        assert row.metrics.taxonomy.units_considered == whole.taxonomy.units_considered


def _synthetic(rng: np.random.Generator, units: int, groups: int, terms: int
               ) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Unit rows over Zipf-weighted terms, some borrowing other groups' topics (some leak)."""
    zipf = 1.0 / np.arange(1, terms + 1)
    topics = [rng.permutation(terms)[: rng.integers(10, 40)] for _ in range(groups)]
    owner = np.concatenate([np.arange(groups), rng.integers(0, groups, units - groups)])
    dense = np.zeros((units, terms))
    for r, g in enumerate(owner.tolist()):
        source = int(rng.integers(0, groups)) if rng.random() < 0.2 else g
        common = rng.choice(terms, size=int(rng.integers(3, 15)), p=zipf / zipf.sum())
        own = rng.choice(topics[source], size=int(rng.integers(1, 10)))
        picked = np.unique(np.concatenate([common, own]))
        dense[r, picked] = rng.random(len(picked)) + 0.05
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    return sparse.csr_matrix(dense), owner


def _assert_decides_alike(found: object, want: object) -> None:
    own, other, best = (getattr(want, f) for f in ("own", "other", "best"))
    assert np.array_equal(found.own, own)  # type: ignore[attr-defined]
    leaks = other > own + _EPS
    assert np.array_equal(found.other > found.own + _EPS, leaks)  # type: ignore[attr-defined]
    assert np.array_equal(found.other[leaks], other[leaks])  # type: ignore[attr-defined]
    assert np.array_equal(found.best[leaks], best[leaks])  # type: ignore[attr-defined]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), slack=st.sampled_from([0.0, 0.001, 0.02]),
       cells=st.sampled_from([50, 2_000, 2_000_000]))
def test_nearest_other_steps_decide_as_the_kernel_does(seed: int, slack: float,
                                                       cells: int) -> None:
    """Rows nudged, replaced by another group's row (own cosines fall), or many at once."""
    rng = np.random.default_rng(seed)
    terms = int(rng.choice([60, 400]))
    matrix, groups = _synthetic(rng, 240, 40, terms)
    chosen = np.sort(rng.choice(240, size=150, replace=False))
    steps = NearestOtherSteps(slack=slack, cells=cells)
    changed: np.ndarray | None = None
    for _ in range(8):
        sums = _group_sums(matrix, groups, 40)
        found = steps(matrix, groups, sums, chosen, _EPS, changed)
        _assert_decides_alike(found, nearest_other(matrix, groups, sums, chosen, _EPS,
                                                   cells=cells))
        dense = matrix.toarray()
        changed = rng.choice(240, size=int(rng.choice([1, 3, 30])), replace=False)
        for r in changed.tolist():
            if rng.random() < 0.4:
                dense[r] = dense[int(rng.integers(0, 240))]  # another unit's words
            else:
                dense[r] *= 1.0 + 0.2 * rng.random(terms) * (dense[r] > 0)
            dense[r] /= np.linalg.norm(dense[r])
        matrix = sparse.csr_matrix(dense)


def test_unknown_changes_or_other_units_are_measured_whole() -> None:
    rng = np.random.default_rng(5)
    matrix, groups = _synthetic(rng, 200, 30, 300)
    sums = _group_sums(matrix, groups, 30)
    chosen = np.arange(0, 200, 2)
    steps = NearestOtherSteps()
    steps(matrix, groups, sums, chosen, _EPS, None)
    steps(matrix, groups, sums, chosen, _EPS, np.zeros(0, np.int64))
    assert steps.whole == 1
    steps(matrix, groups, sums, chosen, _EPS, None)
    assert steps.whole == 2
    found = steps(matrix, groups, sums, chosen[1:], _EPS, np.zeros(0, np.int64))
    assert steps.whole == 3
    _assert_decides_alike(found, nearest_other(matrix, groups, sums, chosen[1:], _EPS))


@pytest.mark.parametrize("rows", [[], [0], [2, 5], [0, 1, 2, 3, 4, 5]])
def test_replace_rows_keeps_the_other_rows_in_order(rows: list[int]) -> None:
    rng = np.random.default_rng(len(rows))
    old = sparse.random(6, 9, density=0.4, format="csr", random_state=rng)
    new = sparse.random(len(rows), 11, density=0.5, format="csr", random_state=rng)
    got = replace_rows(old, np.array(rows, np.int64), new, 11)
    want = old.toarray()
    want = np.pad(want, ((0, 0), (0, 2)))
    want[rows] = new.toarray()
    assert got.shape == (6, 11)
    assert np.array_equal(got.toarray(), want)


def test_unit_rows_are_the_whole_fit_to_the_bit() -> None:
    """Rows re-weighted because a word's document count changed equal a fit of every row."""
    cache = TfidfCache()
    steps = TaxonomySteps(units_cache=cache, labels_cache=TfidfCache())
    texts = [f"nurse porto garden {w} tennis harbour" for w in WORDS]
    rows = steps._rows
    assert rows.update(texts) is None
    texts = list(texts)
    texts[3] += " note"  # "note" was in one text: its idf changes, so does every row holding it
    changed = rows.update(texts)
    assert changed is not None and set(changed.tolist()) == {3, WORDS.index("note")}
    whole = cache.rows_matrix(cache.numbers(texts))
    assert rows.matrix is not None
    assert (rows.matrix != whole).nnz == 0
    assert np.array_equal(rows.matrix.data, whole.data)
    assert np.array_equal(rows.matrix.indices, whole.indices)
    assert rows.matrix.shape == whole.shape
