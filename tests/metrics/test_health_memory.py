"""Health's phases holding less memory give what they gave holding more, to the bit.

Group sums made a block at a time (:class:`GroupSums`) against the whole product;
B2 and B3 from them against B2 and B3 from the whole matrix; column counts in runs
against one ``bincount``; the candidate pairs of the near-duplicate search in
small batches against every pair that shares a key; and whole reports on a
generated store, measured both ways.
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse

from memdir.metrics import Measurer, TfidfCache, _pairs, _taxonomy, measure_taxonomy
from memdir.metrics._b3 import (
    CELLS,
    GroupSums,
    _directions,
    _group_side,
    _head_order,
    _scales,
    nearest_other,
)
from memdir.metrics._taxonomy import _EPS, _b2, _group_squares, _group_sums, row_squares
from memdir.metrics._text import column_counts

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _gen import make_scale_store  # noqa: E402


def _units(seed: int, n: int, groups: int, width: int, density: float, *, every: bool = True
           ) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Unit-length rows with sorted terms (as the term cache builds them) and their groups.

    With ``every`` (and ``n >= groups``) each group has a unit, as Panel B's groups do.
    """
    rng = np.random.default_rng(seed)
    matrix = sparse.random(n, width, density=density, format="csr", random_state=rng)
    matrix.data = np.round(matrix.data, 2) + 0.01
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    matrix = sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)
    matrix.sort_indices()
    owner = rng.integers(0, groups, n)
    if every and n >= groups:
        owner[rng.permutation(n)[:groups]] = np.arange(groups)
    return matrix, owner


def _same_csr(a: sparse.csr_matrix, b: sparse.csr_matrix) -> None:
    assert a.shape == b.shape
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)  # the entry order too, not only the values
    assert np.array_equal(a.data, b.data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 80), groups=st.integers(1, 30),
       width=st.integers(1, 50), density=st.floats(0.0, 0.6))
def test_group_sums_in_blocks_are_the_whole_products_rows(seed: int, n: int, groups: int,
                                                          width: int, density: float) -> None:
    matrix, owner = _units(seed, n, groups, width, density, every=False)
    whole = _group_sums(matrix, owner, groups)  # groups without a unit have an empty row
    made = GroupSums(matrix, owner, groups)
    assert made.shape == whole.shape
    _same_csr(made.whole(), whole)
    rng = np.random.default_rng(seed)
    for lo in range(0, groups, 7):
        _same_csr(made.rows(np.arange(lo, min(lo + 7, groups))), whole[lo : lo + 7])
    picked = rng.integers(0, groups, 12)  # any order, repeats
    _same_csr(made.rows(picked), whole[picked])
    ranges = made.ranges(int(rng.integers(1, 200)))
    assert [r[0] for r in ranges] == [0] + [r[1] for r in ranges[:-1]]
    assert ranges[-1][1] == groups and all(hi > lo for lo, hi in ranges)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), groups=st.integers(2, 40),
       span=st.sampled_from([1, 3, 17, 1000]))
def test_lengths_head_and_directions_from_blocks_are_the_whole_matrixs(seed: int, groups: int,
                                                                      span: int) -> None:
    matrix, owner = _units(seed, 150, groups, 400, 0.05)
    whole = _group_sums(matrix, owner, groups)
    scale, head, q = _group_side(GroupSums(matrix, owner, groups), span)
    assert np.array_equal(scale, _scales(whole, span))
    assert np.array_equal(head, _head_order(whole, 256))
    assert np.array_equal(q, _directions(whole, scale, head))  # the same floats, not close ones


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), cells=st.sampled_from([1, 97, 2_000, CELLS]))
def test_b3_from_blocks_finds_what_it_finds_from_the_whole_matrix(seed: int, cells: int) -> None:
    matrix, owner = _units(seed, 300, 40, 700, 0.04)
    chosen = np.sort(np.random.default_rng(seed).choice(300, size=120, replace=False))
    held = nearest_other(matrix, owner, _group_sums(matrix, owner, 40), chosen, _EPS, cells=cells)
    made = nearest_other(matrix, owner, GroupSums(matrix, owner, 40), chosen, _EPS, cells=cells)
    for part in ("own", "best", "other"):
        assert np.array_equal(getattr(made, part), getattr(held, part)), part
    assert made.survivors == held.survivors


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), groups=st.integers(1, 60))
def test_b2_from_blocks_is_b2_from_the_whole_matrix(seed: int, groups: int) -> None:
    matrix, owner = _units(seed, 200, groups, 300, 0.05)
    whole = _group_sums(matrix, owner, groups)
    made = GroupSums(matrix, owner, groups)
    assert np.array_equal(_group_squares(made), row_squares(whole))
    assert _b2(matrix, owner, made) == _b2(matrix, owner, whole)


def test_blocks_summed_in_another_order_than_the_whole_fall_back_to_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A block whose rows all come out sorted is summed forwards, the whole matrix backwards.

    Units of one term each, met in falling term order, give a group sum whose terms
    rise; the other groups' sums do not. With a block of one group each, the
    blocks disagree and the whole matrix decides.
    """
    rows = [[0, 0, 0, 3.0], [0, 0, 2.0, 0], [0, 1.0, 0, 0], [1.0, 2.0, 0, 0], [0, 0, 1.0, 1.0]]
    matrix = sparse.csr_matrix(np.array(rows) / np.linalg.norm(rows, axis=1, keepdims=True))
    owner = np.array([0, 0, 0, 1, 1])
    whole = _group_sums(matrix, owner, 2)
    assert np.all(np.diff(whole[0].indices) > 0) and not whole.has_canonical_format
    monkeypatch.setattr(_taxonomy, "_SQUARES_CHUNK", 1)
    made = GroupSums(matrix, owner, 2)
    assert len(made.ranges(1)) == 2
    assert np.array_equal(_group_squares(made), row_squares(whole))


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.integers(0, 70), max_size=300), width=st.integers(0, 80),
       chunk=st.integers(1, 50))
def test_column_counts_in_runs_are_bincounts(values: list[int], width: int, chunk: int) -> None:
    indices = np.array(values, np.int32)
    counts = column_counts(indices, width, chunk=chunk)
    expected = np.bincount(indices, minlength=width)
    assert counts.dtype == expected.dtype and np.array_equal(counts, expected)


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.integers(-4, 12), max_size=120), batch=st.sampled_from([1, 5, 1 << 19]),
       in_order=st.booleans(), part=st.sampled_from([1, 7, 1 << 19]))
def test_candidates_are_every_pair_that_shares_a_key(keys: list[int], batch: int,
                                                     in_order: bool, part: int) -> None:
    """Keys held once are dropped before pairing; the pairs are the plain enumeration's.

    Rows in order (as the passes give them, repeats too) are sorted by key alone;
    many keys are sorted in parts.
    """
    rng = np.random.default_rng(len(keys))
    rows = rng.permutation(len(keys)).astype(np.int64)
    if in_order:
        rows = np.sort(rng.integers(0, max(len(keys) // 2, 1), len(keys)))
    key_array = np.array(keys, np.int64)
    expected = sorted((min(rows[i], rows[j]), max(rows[i], rows[j]))
                      for i, j in combinations(range(len(keys)), 2) if keys[i] == keys[j])
    old = _pairs._BATCH
    try:
        _pairs._BATCH = batch
        found = [(int(a), int(b)) for left, right in _pairs._candidates(key_array, rows,
                                                                        part=part)
                 for a, b in zip(left, right, strict=True)]
    finally:
        _pairs._BATCH = old
    assert sorted(found) == expected


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.integers(-3, 40), max_size=100), longest=st.integers(0, 6),
       big=st.booleans())
def test_short_runs_are_the_run_sizes_at_most_the_longest(values: list[int], longest: int,
                                                          big: bool) -> None:
    array = np.array(values, np.int64) * (10**12 if big else 1)  # big: the sorted way
    assert np.array_equal(_pairs._short_runs(array, longest),
                          _pairs._run_sizes(array) <= longest)


def _state(root: Path) -> dict[str, str]:
    return {"/memories/" + str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md"))}


class _Whole:
    """Stands for :class:`GroupSums` in ``measure_taxonomy``: the whole product, as before."""

    def __new__(cls, matrix: sparse.csr_matrix, groups: np.ndarray, count: int
                ) -> sparse.csr_matrix:  # type: ignore[misc]
        return _group_sums(matrix, groups, count)


@pytest.mark.parametrize(("files", "sample"), [(300, None), (300, 500)])
def test_panel_b_is_the_same_with_the_group_sums_held_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int, sample: int | None) -> None:
    """A generated store's Panel B, group sums made in blocks and held whole, to the bit."""
    root = tmp_path / "memories"
    make_scale_store(root, files, seed=3)
    measurer = Measurer()
    summaries = {p: measurer.summary(p, t) for p, t in _state(root).items()}
    tree = measurer.tree(summaries)
    blocks = measure_taxonomy(tree, units_cache=TfidfCache(), b3_sample=sample)
    monkeypatch.setattr(_taxonomy, "GroupSums", _Whole)  # the whole matrix, as before
    whole = measure_taxonomy(tree, units_cache=TfidfCache(), b3_sample=sample)
    assert blocks.to_dict() == whole.to_dict()
    assert blocks.b2_cohesion is not None and blocks.b3_leakage is not None
    assert blocks.leaks  # the store has leaking units, so their cosines are compared too


def test_a_measurer_that_keeps_no_labels_measures_the_same(tmp_path: Path) -> None:
    """Health measures one state: B1's label counts are let go, the numbers stay."""
    root = tmp_path / "memories"
    make_scale_store(root, 120, seed=5)
    state = _state(root)
    keeping, single = Measurer(), Measurer(keep_labels=False)
    kept, let_go = keeping.measure(state), single.measure(state)
    assert let_go.to_dict() == kept.to_dict()
    assert kept.taxonomy.b1_distinguishability is not None
    assert keeping.labels_cache.numbers(["x"]).tolist() != [0]  # counts kept: "x" came later
    assert single.labels_cache.numbers(["x"]).tolist() == [0]  # nothing counted before


def test_children_are_tuples_and_leaves_share_the_empty_one(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    make_scale_store(root, 60, seed=2)
    measurer = Measurer()
    files = {p: measurer.summary(p, t) for p, t in _state(root).items()}
    tree = measurer.tree(files)
    assert all(isinstance(n.children, tuple) for n in tree.nodes)
    leaves = tree.leaves()
    assert leaves and all(n.children == () for n in leaves)
    assert len({id(n.children) for n in leaves}) == 1  # one empty tuple, not one each
    for node in tree.nodes:  # each child names its parent, in id order
        assert all(tree.nodes[c].parent == node.id for c in node.children)
        assert list(node.children) == sorted(node.children)
    assert sum(len(n.children) for n in tree.nodes) == len(tree.nodes) - 1
