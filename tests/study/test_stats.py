"""Sign tests one- and two-sided, and pooled over the conversations of a tier."""

from __future__ import annotations

from math import comb
from pathlib import Path

import pytest

from memdir.study import build_tables, load_run, run_study
from memdir.study._stats import pooled_sign_test, sign_test

from .helpers import smoke_config


def _upper_tail(wins: int, n: int) -> float:
    return sum(comb(n, k) for k in range(wins, n + 1)) / 2**n


def test_one_sided_p_is_the_binomial_tail() -> None:
    a = {f"q{i}": 1.0 for i in range(12)}
    b = {f"q{i}": 0.0 if i < 9 else 1.0 for i in range(12)}
    b.update({f"q{i}": 2.0 for i in range(9, 12)})  # B wins the last three
    t = sign_test(a, b)
    assert (t.a_wins, t.b_wins, t.ties) == (9, 3, 0)
    assert t.p_a_better == pytest.approx(_upper_tail(9, 12)) == pytest.approx(299 / 4096)
    assert round(t.p_a_better, 3) == 0.073  # the paper's "9 vs 3, p = 0.073"
    assert t.p_b_better == pytest.approx(1 - _upper_tail(10, 12))  # P(A wins <= 9)
    assert t.p_value == pytest.approx(2 * 299 / 4096)


def test_pooling_pairs_items_within_each_conversation() -> None:
    # Three conversations that reuse question ids: 3-1, 4-1 and 2-1 wins pool to 9-3.
    def conv(wins: int, losses: int, ties: int) -> tuple[dict[str, float], dict[str, float]]:
        n = wins + losses + ties
        a = {f"q{i}": 1.0 for i in range(n)}
        b = {f"q{i}": 0.0 if i < wins else (2.0 if i < wins + losses else 1.0) for i in range(n)}
        return a, b

    pooled = pooled_sign_test([conv(3, 1, 2), conv(4, 1, 0), conv(2, 1, 1)])
    assert (pooled.a_wins, pooled.b_wins, pooled.ties, pooled.groups) == (9, 3, 3, 3)
    assert pooled.items == 15
    assert round(pooled.p_a_better or 1, 3) == 0.073
    alone = [sign_test(*conv(3, 1, 2)), sign_test(*conv(4, 1, 0)), sign_test(*conv(2, 1, 1))]
    assert all((t.p_a_better or 0) > 0.073 for t in alone)  # pooling is what gives the power


def test_pooling_needs_a_shared_item() -> None:
    with pytest.raises(ValueError, match="no conversation"):
        pooled_sign_test([({"a": 1.0}, {"b": 1.0})])
    tie = pooled_sign_test([({"a": 1.0}, {"a": 1.0})])
    assert tie.p_value is None and tie.p_a_better is None


def test_the_report_pools_a_tier_over_its_conversations(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    if not (data / "locomo" / "locomo10.json").exists():
        pytest.skip("../shared/data is not present on this machine")
    config = smoke_config(data, 6, benchmarks=[
        {"name": "locomo", "conversations": ["conv-26", "conv-50"], "limit": 6}],
        variants=["closed-book", "verbatim"])
    run_study(config, tmp_path / "run")
    tables = {t.name: t for t in build_tables(load_run(tmp_path / "run"))}
    pooled = tables["pooled-sign-tests"]
    assert len(pooled.rows) == 1
    row = dict(zip(pooled.columns, pooled.rows[0], strict=True))
    assert row["conversations"] == 2 and row["items"] == 12
    per = tables["sign-tests"].rows  # the same pairs, one conversation at a time
    assert sum(int(r[5]) for r in per) == row["A wins"]
    assert sum(int(r[6]) for r in per) == row["B wins"]
