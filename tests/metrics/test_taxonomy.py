"""Panel B on stores built so that every cosine is 0 or 1, or a short calculation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from metrics_helpers import fm
from sklearn.feature_extraction.text import TfidfVectorizer

from memdir.metrics import TfidfCache, measure_state

A = "alpha " * 10  # 60 characters, one word: its unit vector is e_alpha
B = "beta " * 10  # one word: e_beta, orthogonal to e_alpha


def _two_groups() -> dict[str, str]:
    # folder fruits: units A, A, B; folder tools: units B, B, A (one file = one unit)
    files = {}
    for folder, texts in (("fruits", (A, A, B)), ("tools", (B, B, A))):
        for k, text in enumerate(texts):
            name = f"{folder}-{k}"
            files[f"/memories/{folder}/{name}.md"] = fm(name, f"entry {k}") + text + "\n"
    return files


def test_b2_b3_b4_by_hand() -> None:
    tax = measure_state(_two_groups()).taxonomy
    assert tax.units_considered == 6
    # same-parent pairs: fruits AA=1, AB=0, AB=0; tools BB=1, BA=0, BA=0 -> mean 2/6
    assert tax.b2_same_mean == pytest.approx(1 / 3)
    # cross pairs (3x3): A,A,B against B,B,A -> A-A twice, B-B twice -> mean 4/9
    assert tax.b2_cross_mean == pytest.approx(4 / 9)
    assert tax.b2_cohesion == pytest.approx((1 / 3) / (4 / 9))
    # centroids: fruits ~ (2,1)/sqrt5, tools ~ (1,2)/sqrt5 over (alpha, beta). The B in
    # fruits has own cos 1/sqrt5 < 2/sqrt5 with tools: it leaks; so does the A in tools.
    assert tax.b3_leakage == pytest.approx(2 / 6)
    assert sorted(leak.unit for leak in tax.leaks) == [
        "/memories/fruits/fruits-2.md",
        "/memories/tools/tools-2.md",
    ]
    leak = tax.leaks[0]
    assert leak.own_cosine == pytest.approx(1 / math.sqrt(5))
    assert leak.other_cosine == pytest.approx(2 / math.sqrt(5))
    # B4 over all 15 pairs: tree distance 2 (same folder, 6 pairs) or 4 (9 pairs); content
    # distance 0 or 1. Same folder: 2 at 0, 4 at 1; across: 4 at 0, 5 at 1. Both variables
    # are binary, so Spearman = phi = (5*2 - 4*4) / sqrt(9*6*9*6) = -6/54.
    assert tax.b4_pairs == 15
    assert tax.b4_spearman == pytest.approx(-6 / 54)


def test_b1_label_distinguishability_by_hand() -> None:
    files = {
        "/memories/cat.md": fm("cat", "pets") + A,
        "/memories/dog.md": fm("dog", "pets") + B,
    }
    tax = measure_state(files).taxonomy
    # labels "cat pets" and "dog pets"; n=2 labels, idf(pets) = ln(3/3)+1 = 1,
    # idf(cat) = idf(dog) = ln(3/2)+1 = a. cos = 1*1 / (a^2 + 1).
    a = math.log(1.5) + 1
    expected = 1 - 1 / (a * a + 1)
    assert tax.b1_nodes == 1
    assert tax.b1_distinguishability == pytest.approx(expected)
    assert tax.b1_min == pytest.approx(expected)
    assert tax.b1_worst_pair is not None
    assert {tax.b1_worst_pair.a, tax.b1_worst_pair.b} == {"/memories/cat.md", "/memories/dog.md"}


def test_b1_averages_per_node_and_names_the_worst_pair() -> None:
    files = {
        # root: file "blue sky" and folder "red" -> disjoint labels, distinguishability 1
        "/memories/blue.md": fm("blue", "sky") + A,
        # folder red: two files whose labels share three of four words
        "/memories/red/one.md": fm("one", "same words here") + A,
        "/memories/red/two.md": fm("two", "same words here") + B,
    }
    tax = measure_state(files).taxonomy
    # node root: 1 pair at 1.0; node red: 1 pair "one same words here" / "two ..."
    # Both internal nodes count once: B1 = (1 + d_red) / 2, min = d_red.
    assert tax.b1_nodes == 2
    assert tax.b1_min is not None and tax.b1_min < 1
    assert tax.b1_distinguishability == pytest.approx((1 + tax.b1_min) / 2)
    assert tax.b1_worst_pair is not None and tax.b1_worst_pair.parent == "/memories/red"


def test_short_units_are_ignored() -> None:
    files = _two_groups()
    files["/memories/fruits/tiny.md"] = fm("tiny", "short") + "under forty chars\n"
    tax = measure_state(files).taxonomy
    assert tax.units_considered == 6
    assert tax.b2_cohesion == pytest.approx(0.75)


def test_single_group_has_no_cross_or_leak_values() -> None:
    files = {f"/memories/s{k}.md": fm(f"s{k}", "x") + A for k in range(3)}
    tax = measure_state(files).taxonomy
    assert tax.b2_cross_mean is None and tax.b2_cohesion is None
    assert tax.b3_leakage is None
    assert tax.b4_spearman is None  # all tree distances equal


def test_sampled_b4_is_seeded() -> None:
    files = {}
    words = ["alpha", "beta", "gamma", "delta", "omega"]
    for g in range(4):
        for k in range(8):
            text = " ".join(words[(g + j * k) % 5] for j in range(12))
            files[f"/memories/g{g}/u{k}.md"] = fm(f"u{k}", "unit") + text + "\n"
    from memdir.metrics import Measurer

    first = Measurer(max_pairs=50, seed=1).measure(files).taxonomy
    again = Measurer(max_pairs=50, seed=1).measure(dict(reversed(files.items()))).taxonomy
    other = Measurer(max_pairs=50, seed=2).measure(files).taxonomy
    full = Measurer(max_pairs=10_000).measure(files).taxonomy
    assert first.b4_pairs == 50 and full.b4_pairs == 32 * 31 // 2
    assert first.b4_spearman == again.b4_spearman
    assert first.b4_spearman != other.b4_spearman


def test_tfidf_cache_equals_scikit_learn() -> None:
    texts = ["the cat sat on the mat", "dogs and cats", "", "a b", "the dog saw the cat", "mat"]
    cache = TfidfCache()
    cache.matrix(["unrelated words first", "cat"])  # a vocabulary that grew elsewhere
    ours = cache.matrix(texts)
    reference = TfidfVectorizer().fit_transform(texts)
    assert np.allclose((ours @ ours.T).toarray(), (reference @ reference.T).toarray())
