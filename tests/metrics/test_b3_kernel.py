"""B3's bounded kernel finds what main's dense kernel found, with the same cosines to 1e-12.

The oracle (``b3_reference.py``) computes every unit-centroid cosine; the kernel
skips pairs a bound proves cannot leak. Both are run on generated term matrices
(topics shared by groups, units borrowed from other groups' topics so some
leak), on crafted near-ties, and on generated stores through ``measure_taxonomy``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from b3_reference import dense_nearest_other
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from memdir.metrics import Measurer, TfidfCache, measure_taxonomy
from memdir.metrics._b3 import CELLS, HEAD_TERMS, MARGIN, NearestOther, nearest_other
from memdir.metrics._taxonomy import _EPS, B3_BUDGET, _b3_units, _group_sums

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _gen import make_scale_store  # noqa: E402


def _synthetic(seed: int, units: int, groups: int, terms: int
               ) -> tuple[sparse.csr_matrix, np.ndarray, sparse.csr_matrix]:
    """Unit rows drawn from group topics over Zipf-weighted terms; one unit in six borrows."""
    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, terms + 1)
    topics = [rng.permutation(terms)[: rng.integers(20, 80)] for _ in range(groups)]
    owner = np.concatenate([np.arange(groups), rng.integers(0, groups, units - groups)])
    rows, cols, vals = [], [], []
    for r, g in enumerate(owner.tolist()):
        source = int(rng.integers(0, groups)) if rng.random() < 1 / 6 else g
        common = rng.choice(terms, size=int(rng.integers(5, 25)), p=zipf / zipf.sum())
        own = rng.choice(topics[source], size=int(rng.integers(1, 15)))
        picked = np.unique(np.concatenate([common, own]))
        weights = rng.random(len(picked)) + 0.05
        rows.extend([r] * len(picked))
        cols.extend(picked.tolist())
        vals.extend((weights / np.linalg.norm(weights)).tolist())
    matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(units, terms))
    return matrix, owner, _group_sums(matrix, owner, groups)


def _dense_cosines(matrix: sparse.csr_matrix, sums: sparse.csr_matrix, chosen: np.ndarray
                   ) -> np.ndarray:
    lengths = np.linalg.norm(sums.toarray(), axis=1)
    return (matrix[chosen].toarray() @ sums.toarray().T) / np.where(lengths > 0, lengths, 1.0)


def _assert_same(matrix: sparse.csr_matrix, groups: np.ndarray, sums: sparse.csr_matrix,
                 chosen: np.ndarray, found: NearestOther) -> None:
    own, best, other = dense_nearest_other(matrix, groups, sums, chosen, _EPS)
    leaks = other > own + _EPS
    assert np.array_equal(found.other > found.own + _EPS, leaks)
    np.testing.assert_allclose(found.own, own, rtol=0, atol=1e-12)
    assert np.array_equal(found.best[leaks], best[leaks])
    np.testing.assert_allclose(found.other[leaks], other[leaks], rtol=0, atol=1e-12)
    # Soundness of the skipping: every unit whose nearest other group comes within
    # the margin of its own cosine has that group and cosine reported.
    full = _dense_cosines(matrix, sums, chosen)
    full[np.arange(len(chosen)), groups[chosen]] = -np.inf
    near = full.max(axis=1) > own + _EPS - MARGIN / 2
    np.testing.assert_allclose(found.other[near], full.max(axis=1)[near], rtol=0, atol=1e-12)
    reported = found.best >= 0
    assert np.all(reported[near])
    rows = np.flatnonzero(reported)
    np.testing.assert_allclose(found.other[rows], full[rows, found.best[rows]], rtol=0, atol=1e-12)
    assert np.all(np.isneginf(found.other[~reported]))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), cells=st.sampled_from([1, 97, 2_000, CELLS]),
       terms=st.sampled_from([40, 300, 900]))
def test_same_leaks_and_cosines_as_the_dense_kernel(seed: int, cells: int, terms: int) -> None:
    matrix, groups, sums = _synthetic(seed, 260, 45, terms)
    chosen = np.sort(np.random.default_rng(seed).choice(260, size=180, replace=False))
    found = nearest_other(matrix, groups, sums, chosen, _EPS, cells=cells)
    _assert_same(matrix, groups, sums, chosen, found)


@pytest.mark.parametrize("seed", range(3))
def test_many_head_terms_and_blocks(seed: int) -> None:
    """More terms than the head holds, groups in many blocks, some units leaking."""
    matrix, groups, sums = _synthetic(seed, 900, 60, 2_000)
    held = np.count_nonzero(np.bincount(sums.indices, minlength=2_000))
    assert held > HEAD_TERMS  # some terms are bounded, the rest computed exactly
    chosen = np.arange(900)
    found = nearest_other(matrix, groups, sums, chosen, _EPS, cells=20_000)
    _assert_same(matrix, groups, sums, chosen, found)
    assert (found.other > found.own + _EPS).sum() >= 5
    assert found.survivors < len(chosen) * sums.shape[0] / 4  # most pairs were skipped


def test_cosines_do_not_depend_on_the_blocks() -> None:
    """A pair's cosine is the same float whichever groups share its block (unlike BLAS's)."""
    matrix, groups, sums = _synthetic(11, 400, 30, 1_500)
    chosen = np.arange(0, 400, 2)
    runs = [nearest_other(matrix, groups, sums, chosen, _EPS, cells=c) for c in (1, 300, CELLS)]
    for run in runs[1:]:
        assert np.array_equal(run.own, runs[0].own)
        assert np.array_equal(run.best, runs[0].best)
        assert np.array_equal(run.other, runs[0].other)
        assert run.survivors == runs[0].survivors
    assert (runs[0].other > runs[0].own + _EPS).any()


def _pairs_store(gap: float) -> tuple[sparse.csr_matrix, np.ndarray, sparse.csr_matrix]:
    """Unit 0 whose own centroid is at angle 0.6 from it, another centroid nearer by ``gap``.

    Group 0 is unit 0 and a unit at angle 1.2 (their sum bisects them); group 1 is
    one unit with cosine ``cos(0.6) + gap`` with unit 0; groups 2 and 3 repeat
    group 1 exactly (a three-way tie) and group 4 repeats group 0 (a tie with the
    own centroid). Other groups hold terms of their own.
    """
    angle = np.arccos(np.cos(0.6) + gap)
    plane = [[1.0, 0.0], [np.cos(1.2), np.sin(1.2)], [np.cos(angle), np.sin(angle)]]
    rows = [plane[0], plane[1], plane[2], plane[2], plane[2], plane[0], plane[1]]
    owner = [0, 0, 1, 2, 3, 4, 4]
    rng = np.random.default_rng(7)
    dense = np.zeros((len(rows) + 40, 12))
    dense[: len(rows), :2] = rows
    dense[len(rows) :, 2:] = rng.random((40, 10)) * (rng.random((40, 10)) < 0.4)
    dense[len(rows) :, 2] += 0.01
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    groups = np.array(owner + [5 + k % 8 for k in range(40)])
    matrix = sparse.csr_matrix(dense)
    return matrix, groups, _group_sums(matrix, groups, 13)


@pytest.mark.parametrize("cells", [1, CELLS])
def test_a_lead_of_1e10_is_a_leak_and_ties_go_to_the_lowest_group(cells: int) -> None:
    matrix, groups, sums = _pairs_store(1e-10)
    chosen = np.arange(matrix.shape[0])
    found = nearest_other(matrix, groups, sums, chosen, _EPS, cells=cells)
    _assert_same(matrix, groups, sums, chosen, found)
    assert found.other[0] - found.own[0] == pytest.approx(1e-10, abs=1e-13)
    assert found.best[0] == 1  # groups 1-3 tie exactly: the lowest wins
    assert found.other[0] > found.own[0] + _EPS
    assert found.own[5] == found.own[0]  # unit 5 is unit 0 again, group 4 is group 0 again
    assert found.best[5] == 1


@pytest.mark.parametrize("gap", [-1e-10, 0.0, 1e-13])
def test_a_tie_or_a_lead_under_eps_is_no_leak(gap: float) -> None:
    matrix, groups, sums = _pairs_store(gap)
    chosen = np.arange(matrix.shape[0])
    found = nearest_other(matrix, groups, sums, chosen, _EPS)
    _assert_same(matrix, groups, sums, chosen, found)
    assert not found.other[0] > found.own[0] + _EPS
    if gap < 0:  # group 0 is unit 5's nearest other group: the same centroid as its own
        assert found.best[5] == 0
        assert found.other[5] == found.own[5]


def _state(root: Path) -> dict[str, str]:
    return {"/memories/" + str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md"))}


@pytest.mark.parametrize("seed", [1, 4])
def test_generated_stores_give_the_dense_kernels_leaks(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "memories"
    make_scale_store(root, 250, seed=seed)
    measurer = Measurer()
    summaries = {p: measurer.summary(p, t) for p, t in _state(root).items() if p.endswith(".md")}
    tree = measurer.tree(summaries)
    tax = measure_taxonomy(tree, seed=seed)
    units = [u for u in tree.units if len(u.text) >= 40]
    matrix = TfidfCache().matrix([u.text for u in units])
    parents = sorted({u.parent for u in units})
    column = {p: k for k, p in enumerate(parents)}
    groups = np.array([column[u.parent] for u in units], dtype=np.int64)
    sums = _group_sums(matrix, groups, len(parents))
    chosen = _b3_units([u.key for u in units], len(parents), B3_BUDGET, seed)
    assert tax.b3_units == len(chosen) == len(units)
    own, best, other = dense_nearest_other(matrix, groups, sums, chosen, _EPS)
    leaking = np.flatnonzero(other > own + _EPS)
    assert len(leaking) > 0
    assert tax.b3_leakage == len(leaking) / len(chosen)
    expected = {(units[chosen[r]].key, tree.nodes[parents[groups[chosen[r]]]].path,
                 tree.nodes[parents[best[r]]].path): (own[r], other[r]) for r in leaking}
    got = {(leak.unit, leak.own_group, leak.nearest_group): (leak.own_cosine, leak.other_cosine)
           for leak in tax.leaks}
    assert got.keys() == expected.keys()
    for key, (own_cos, other_cos) in expected.items():
        assert got[key][0] == pytest.approx(own_cos, abs=1e-12)
        assert got[key][1] == pytest.approx(other_cos, abs=1e-12)
