"""Paired comparisons of two variants on the same questions: the exact sign test."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel
from scipy.stats import binomtest

__all__ = ["SignTest", "sign_test"]


class SignTest(BaseModel):
    """How often A beat B on the same items, and the two-sided exact binomial p-value."""

    items: int
    a_wins: int
    b_wins: int
    ties: int
    mean_diff: float
    p_value: float | None
    """None when every item is a tie (no test possible)."""


def sign_test(a: Mapping[str, float], b: Mapping[str, float]) -> SignTest:
    """Sign test over the items both score maps share; ties are dropped from the test.

    Raises:
        ValueError: The two maps share no item.
    """
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError("the two variants share no question; a paired test needs the same items")
    diffs = [a[k] - b[k] for k in shared]
    wins = sum(1 for d in diffs if d > 0)
    losses = sum(1 for d in diffs if d < 0)
    p = binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else None
    return SignTest(items=len(shared), a_wins=wins, b_wins=losses,
                    ties=len(shared) - wins - losses, mean_diff=sum(diffs) / len(diffs),
                    p_value=None if p is None else float(p))
