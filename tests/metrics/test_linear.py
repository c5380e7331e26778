"""The linear metrics find what the all-pairs computations found, and stay bounded.

Each check compares the measure with its all-pairs reference
(``allpairs_reference.py``, the code the metrics ran before) on generated stores
of realistic shape and on stores built to hit the edge cases: identical labels,
labels without a word, siblings that share no word, a flat folder.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from allpairs_reference import (
    b1_all_pairs,
    b3_all_units,
    duplicates_all_pairs,
    tree_distances,
)
from metrics_helpers import fm
from scipy import sparse

from memdir.metrics import (
    MIN_UNIT_CHARS,
    Measurer,
    TfidfCache,
    find_duplicates,
    measure_state,
    measure_taxonomy,
    read_state,
)
from memdir.metrics._pairs import similar_pairs
from memdir.metrics._taxonomy import _lowest_common, _sample_pairs
from memdir.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _gen import make_scale_store  # noqa: E402


def _state(root: Path) -> dict[str, str]:
    return {"/memories/" + str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md"))}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    """Three generated stores of 300 files (different seeds, more copies in one)."""
    out = []
    for seed, share in ((1, 0.02), (2, 0.02), (3, 0.1)):
        root = tmp_path_factory.mktemp(f"gen{seed}")
        make_scale_store(root, 300, seed=seed, copy_share=share)
        out.append(_state(root))
    return out


def _random_rows(rng: np.random.Generator, n: int, width: int, density: float
                 ) -> sparse.csr_matrix:
    dense = rng.random((n, width)) * (rng.random((n, width)) < density)
    dense[rng.integers(0, n, n // 5)] = dense[rng.integers(0, n, n // 5)]  # exact copies
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    norms[norms == 0] = 1
    return sparse.csr_matrix(dense / norms)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [0.95, 0.7, 0.3, 1e-12])
def test_similar_pairs_are_every_pair_above_the_threshold(seed: int, threshold: float) -> None:
    rng = np.random.default_rng(seed)
    matrix = _random_rows(rng, 120, 30, 0.15)
    groups = rng.integers(0, 4, 120)
    apart = rng.integers(0, 30, 120)
    full = (matrix @ matrix.T).toarray()
    for g, s in ((None, None), (groups, None), (None, apart), (groups, apart)):
        a, b, cos = similar_pairs(matrix, threshold, groups=g, apart=s)
        i, j = np.nonzero(np.triu((full >= threshold - 1e-12) & (full > 0), k=1))
        keep = np.ones(len(i), bool)
        if g is not None:
            keep &= g[i] == g[j]
        if s is not None:
            keep &= s[i] != s[j]
        assert set(zip(a.tolist(), b.tolist(), strict=True)) == set(
            zip(i[keep].tolist(), j[keep].tolist(), strict=True))
        np.testing.assert_allclose(cos, full[a, b], atol=1e-12)


def test_duplicates_are_exactly_the_all_pairs_ones(generated: list[dict[str, str]]) -> None:
    for files in generated:
        tree = Measurer().measure(files).tree
        old = duplicates_all_pairs(tree)
        new = {(p.a, p.b) for p in find_duplicates(tree)}
        assert old, "the generated store should hold planted copies"
        assert new == old  # recall 1 and nothing extra


def _b1_checks(files: dict[str, str]) -> None:
    tree = Measurer().measure(files).tree
    tax = measure_taxonomy(tree)
    reference = b1_all_pairs(tree)
    assert reference is not None
    mean, minimum, worst = reference
    assert tax.b1_distinguishability == pytest.approx(mean, abs=1e-12)
    assert tax.b1_min == minimum  # the same float: the same pair's cosine
    assert tax.b1_worst_pair is not None
    assert (tax.b1_worst_pair.parent, tax.b1_worst_pair.a, tax.b1_worst_pair.b) == worst


def test_b1_matches_all_pairs_on_generated_stores(generated: list[dict[str, str]]) -> None:
    for files in generated:
        _b1_checks(files)


def _words(rng: random.Random, k: int) -> str:
    pool = "apple birch cedar delta ember fjord grove harbor iris juniper kelp lumen".split()
    return " ".join(rng.choice(pool) for _ in range(k))


@pytest.mark.parametrize("seed", range(4))
def test_b1_matches_all_pairs_on_edge_cases(seed: int) -> None:
    rng = random.Random(seed)
    body = "plain text long enough to count as a content unit of the store\n"
    files: dict[str, str] = {}
    for k in range(60):  # a flat folder of similar descriptions, some identical
        desc = _words(rng, 3) if k % 7 else "the same description"
        files[f"/memories/flat/note-{k}.md"] = fm(f"note-{k}", desc) + body
    heads = ["## 1", "## -", "## 2", "## 1", "## Notes", "## Notes", "## notes", "## a"]
    parts = [f"{rng.choice(heads)}\n\n{body}" for _ in range(40)]
    files["/memories/headings.md"] = fm("headings", "many headings") + "\n".join(parts)
    files["/memories/apart/x.md"] = fm("x", "zebra") + body  # siblings sharing no word
    files["/memories/apart/y.md"] = fm("y", "yak") + body
    _b1_checks(files)


def test_b1_when_no_siblings_share_a_word() -> None:
    body = "plain text long enough to count as a content unit of the store\n"
    files = {f"/memories/{w}.md": fm(w, f"{w} {w}s") + body
             for w in ("apple", "birch", "cedar", "delta")}
    _b1_checks(files)
    tax = measure_state(files).taxonomy
    assert tax.b1_min == 1.0 and tax.b1_distinguishability == 1.0


def test_b3_exact_within_the_budget(generated: list[dict[str, str]]) -> None:
    for files in generated:
        tree = Measurer().measure(files).tree
        tax = measure_taxonomy(tree)
        assert tax.b3_units == tax.units_considered  # small: every unit
        assert tax.b3_leakage == pytest.approx(b3_all_units(tree), abs=1e-12)


def test_b3_sample_is_seeded_bounded_and_close(generated: list[dict[str, str]]) -> None:
    files = generated[2]
    tree = Measurer().measure(files).tree
    exact = b3_all_units(tree)
    assert exact is not None
    units = sum(1 for u in tree.units if len(u.text) >= MIN_UNIT_CHARS)
    groups = len({u.parent for u in tree.units if len(u.text) >= MIN_UNIT_CHARS})
    budget = units * groups // 4  # forces a sample of about a quarter of the units
    import memdir.metrics._taxonomy as taxonomy

    old_min = taxonomy.B3_MIN_SAMPLE
    taxonomy.B3_MIN_SAMPLE = 10
    try:
        one = measure_taxonomy(tree, b3_budget=budget, seed=5)
        two = measure_taxonomy(tree, b3_budget=budget, seed=5)
        other = measure_taxonomy(tree, b3_budget=budget, seed=6)
    finally:
        taxonomy.B3_MIN_SAMPLE = old_min
    assert one.b3_units == budget // groups < units
    assert one.b3_leakage == two.b3_leakage  # seeded
    assert [leak.unit for leak in one.leaks] == [leak.unit for leak in two.leaks]
    assert one.b3_units == other.b3_units
    assert one.b3_leakage is not None
    # a sample of m units out of N: standard error sqrt(p(1-p)/m * (N-m)/(N-1))
    m = one.b3_units
    spread = np.sqrt(max(exact * (1 - exact), 0.01) / m * (units - m) / (units - 1))
    assert abs(one.b3_leakage - exact) <= 4 * spread
    every = {leak.unit for leak in measure_taxonomy(tree).leaks}
    assert {leak.unit for leak in one.leaks} <= every  # a sampled leak is a real leak


def test_b4_tree_distances_match_the_ancestor_chains(generated: list[dict[str, str]]) -> None:
    tree = Measurer().measure(generated[0]).tree
    units = [u for u in tree.units if len(u.text) >= MIN_UNIT_CHARS]
    left, right = _sample_pairs(len(units), 3000, 0)
    leaf = np.array([u.node for u in units])
    depth = np.array([n.depth for n in tree.nodes])
    parent = np.array([max(n.parent, 0) for n in tree.nodes])
    lca = _lowest_common(parent, depth, leaf[left], leaf[right])
    got = depth[leaf[left]] + depth[leaf[right]] - 2 * depth[lca]
    np.testing.assert_array_equal(got, tree_distances(tree, leaf[left], leaf[right]))


def test_duplicates_reuse_the_measurers_term_counts(generated: list[dict[str, str]]) -> None:
    measurer = Measurer()
    tree = measurer.measure(generated[0]).tree
    cached = find_duplicates(tree, cache=measurer.units_cache)
    fresh = find_duplicates(tree, cache=TfidfCache())
    assert [(p.a, p.b) for p in cached] == [(p.a, p.b) for p in fresh]


@pytest.mark.parametrize("run", [1, 4])
def test_the_sketch_finds_the_planted_copies_when_postings_are_cut(
        generated: list[dict[str, str]], run: int) -> None:
    for files in generated:
        tree = Measurer().measure(files).tree
        units = [u for u in tree.units if len(u.text) >= MIN_UNIT_CHARS]
        matrix = TfidfCache().matrix([u.text for u in units])
        apart = np.array([hash(u.file) for u in units])
        exact = similar_pairs(matrix, 0.9, apart=apart)
        cut = similar_pairs(matrix, 0.9, apart=apart, sketch=4, sketch_run=run)
        found = set(zip(cut[0].tolist(), cut[1].tolist(), strict=True))
        wanted = set(zip(exact[0].tolist(), exact[1].tolist(), strict=True))
        assert found <= wanted  # every pair reported is a real one
        assert len(found) >= 0.95 * len(wanted)


_BOUNDED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2_500_000_000, 2_500_000_000))
from memdir.metrics import health_report
from memdir.store import Store
report = health_report(Store(sys.argv[1]))
print(report.metrics.shape.sections, report.metrics.shape.max_depth)
"""


def test_health_of_a_file_with_30000_headings_fits_in_bounded_memory(tmp_path: Path) -> None:
    # Sibling headings were paired all at once (30,000 siblings: 450 million pairs, GBs of
    # indices); now B1 needs no pair list, so health runs under a 2.5 GB address space.
    body = "".join("## Same heading\n\nsome text here\n\n" if k % 3 else f"## Part {k} notes\n\n"
                   for k in range(30_000))
    (tmp_path / "many.md").write_text(fm("many", "many headings") + body, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", _BOUNDED, str(tmp_path)], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "30000"


def test_health_of_a_store_1000_folders_deep(tmp_path: Path) -> None:
    # Building the combined tree recursed once per folder level: RecursionError at 1,000.
    folder = tmp_path
    for level in range(1000):
        folder = folder / "d"
        if level % 250 == 249:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"note-{level}.md").write_text(
                fm(f"note-{level}", f"level {level}") + "## Part\n\n" + "text words " * 10,
                encoding="utf-8")
    try:
        done = subprocess.run([sys.executable, "-c", _BOUNDED, str(tmp_path)],
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split() == ["4", "1002"]  # 1,000 folders, the file, its heading
        tree = Measurer().measure(read_state(Store(tmp_path))).tree
        from memdir.metrics import draw_tree_text

        assert draw_tree_text(tree).count("\n") == len(tree.nodes) - 1
    finally:
        Store(tmp_path).delete("/memories/d")  # pytest's own clean-up of temp folders recurses
