"""Paired comparisons of two variants on the same questions: the exact sign test.

Each question both variants answered is one item; an item where A scored higher
is a win for A, lower a win for B, equal a tie (ties are dropped from the test).
The test is the exact binomial test of the wins against an even split, reported
two-sided and one-sided in each direction. Several conversations of one tier
(the paper's three PersonaMem 32k contexts) can be pooled into one test: their
items are put together, keyed by conversation, before counting.

The report's figures draw each cell's mean with a 95% percentile bootstrap
interval (:func:`bootstrap_interval`): resampling the cell's questions with a
fixed seed, it suits token F1 and 0/1 grades alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel
from scipy.stats import binomtest

__all__ = ["SignTest", "bootstrap_interval", "pooled_sign_test", "sign_test"]


class SignTest(BaseModel):
    """How often A beat B on the same items, with exact binomial p-values."""

    items: int
    a_wins: int
    b_wins: int
    ties: int
    mean_diff: float
    p_value: float | None
    """Two-sided; None when every item is a tie (no test possible)."""
    p_a_better: float | None = None
    """One-sided, for the hypothesis that A beats B (P of at least ``a_wins`` wins)."""
    p_b_better: float | None = None
    """One-sided, for the hypothesis that B beats A."""
    groups: int = 1
    """How many conversations the items were pooled from."""


def _test(diffs: list[float], groups: int) -> SignTest:
    wins = sum(1 for d in diffs if d > 0)
    losses = sum(1 for d in diffs if d < 0)
    n = wins + losses

    def p(alternative: str) -> float | None:
        return float(binomtest(wins, n, 0.5, alternative=alternative).pvalue) if n else None

    return SignTest(items=len(diffs), a_wins=wins, b_wins=losses, ties=len(diffs) - n,
                    mean_diff=sum(diffs) / len(diffs), p_value=p("two-sided"),
                    p_a_better=p("greater"), p_b_better=p("less"), groups=groups)


def sign_test(a: Mapping[str, float], b: Mapping[str, float]) -> SignTest:
    """Sign test over the items both score maps share; ties are dropped from the test.

    Raises:
        ValueError: The two maps share no item.
    """
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError("the two variants share no question; a paired test needs the same items")
    return _test([a[k] - b[k] for k in shared], 1)


def pooled_sign_test(pairs: Iterable[tuple[Mapping[str, float], Mapping[str, float]]]
                     ) -> SignTest:
    """One sign test over several conversations: each pair is (A's, B's) scores on one of them.

    Items are paired within a conversation only, so two conversations that reuse a
    question id never mix.

    Raises:
        ValueError: No pair shares an item.
    """
    diffs: list[float] = []
    groups = 0
    for a, b in pairs:
        shared = sorted(set(a) & set(b))
        if shared:
            groups += 1
            diffs.extend(a[k] - b[k] for k in shared)
    if not diffs:
        raise ValueError("no conversation has questions both variants answered")
    return _test(diffs, groups)


def bootstrap_interval(values: Sequence[float], *, seed: int = 0, resamples: int = 2000,
                       level: float = 0.95) -> tuple[float, float]:
    """A percentile bootstrap interval for the mean of ``values``.

    Args:
        values: One figure per item (a question's score, its tool calls).
        seed: Seed of the resampling, so a report redraws the same interval.
        resamples: How many resamples of the items, with replacement.
        level: The interval's coverage.

    Raises:
        ValueError: No values.
    """
    if not values:
        raise ValueError("a bootstrap interval needs at least one value")
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = rng.choice(data, size=(resamples, data.size), replace=True).mean(axis=1)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)
