"""Prices applied after the fact, and compute bounds on hand-computed transcripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.agents import CallRecord, ComputeBounds, PriceTable, Usage, cell_bounds, episode_bounds


def _call(round_no: int, **usage: int) -> CallRecord:
    return CallRecord(role="search", round=round_no, model="openai/gpt-5.4-mini",
                      prompt_hash="h", stop_reason="stop", latency_s=0.1, usage=Usage(**usage))


def test_gpt_5_4_mini_rates() -> None:
    table = PriceTable.load()
    u = Usage(uncached_input=1_000_000, cached_input=2_000_000, output=100_000)
    assert table.cost("openai/gpt-5.4-mini", u) == pytest.approx(0.75 + 0.15 + 0.45)
    # Looked up by the last path part too (e.g. behind an OpenAI-compatible gateway).
    assert table.cost("openai-api/gateway/gpt-5.4-mini", u) == pytest.approx(1.35)


def test_unknown_prices_stay_unknown(tmp_path: Path) -> None:
    user = tmp_path / "prices.yaml"
    user.write_text("someone/priceless:\n  input: null\n  output: 1\n")
    table = PriceTable.load(user)
    u = Usage(uncached_input=10, output=1)
    assert table.price("someone/priceless") is not None
    assert table.cost("someone/priceless", u) is None
    assert table.cost("someone/priceless", Usage(output=1_000_000)) == pytest.approx(1.0)
    assert table.cost("someone/unlisted", u) is None
    assert table.cost("someone/unlisted", Usage()) == 0.0
    assert table.cost("memdir/grep-reader", u) == 0.0


@pytest.mark.parametrize(("model", "rates"), [
    ("openai/gpt-5.4", (2.50, 0.25, 15.00)), ("openai/gpt-5.4-nano", (0.20, 0.02, 1.25)),
    ("openai/gpt-4.1", (2.00, 0.50, 8.00)), ("openai/gpt-4.1-mini", (0.40, 0.10, 1.60))])
def test_the_ladder_and_execution_models_have_published_rates_with_a_source(
        model: str, rates: tuple[float, float, float]) -> None:
    price = PriceTable.load().price(model)
    assert price is not None
    assert (price.input, price.cached_input, price.output) == rates
    assert "https://" in price.source and "pricing" in price.source  # where, and when
    assert any(str(year) in price.source for year in (2025, 2026))


def test_user_file_is_merged_over_defaults(tmp_path: Path) -> None:
    user = tmp_path / "prices.yaml"
    user.write_text("openai/gpt-5.4:\n  input: 3\n  cached_input: 0.25\n  output: 16\n")
    table = PriceTable.load(user)
    u = Usage(uncached_input=1_000_000, output=1_000_000)
    assert table.cost("openai/gpt-5.4", u) == pytest.approx(19.0)
    assert table.cost("openai/gpt-5.4-mini", u) == pytest.approx(5.25)


def test_bad_user_file_says_what_is_wrong(tmp_path: Path) -> None:
    user = tmp_path / "prices.yaml"
    user.write_text("openai/x:\n  input: -1\n")
    with pytest.raises(ValueError, match="price of openai/x is invalid"):
        PriceTable.load(user)
    with pytest.raises(ValueError, match="cannot read"):
        PriceTable.load(tmp_path / "missing.yaml")


def test_cache_writes_default_to_the_input_rate() -> None:
    table = PriceTable.load()
    u = Usage(cache_write=1_000_000)
    assert table.cost("openai/gpt-5.4-mini", u) == pytest.approx(0.75)


def test_bounds_of_a_hand_computed_episode() -> None:
    # Round 1: context 1000 (all uncached), writes 100 tokens (20 reasoning).
    # Round 2: context 1000 + 80 visible + 200 tool result = 1280; 1000 served from cache.
    # Round 3: context 1280 + 50 visible + 300 = 1630; 1280 cached.
    calls = [
        _call(1, uncached_input=1000, output=100, reasoning=20),
        _call(2, uncached_input=280, cached_input=1000, output=50),
        _call(3, uncached_input=350, cached_input=1280, output=40),
    ]
    b = episode_bounds(calls)
    assert b.first_context == 1000
    assert b.unique_prefill == 1000 + 200 + 300
    assert b.decode == 190
    assert b.ceiling == (1000 + 1280 + 1630) + 190
    assert b.floor == 1500 + 190
    assert b.measured == (1000 + 280 + 350) + 190
    assert b.realized == pytest.approx((4100 - 1820) / (4100 - 1690))
    assert b.overstatement == pytest.approx(4100 / 1690)


def test_no_cache_at_all_realizes_nothing_and_perfect_cache_everything() -> None:
    none = episode_bounds([_call(1, uncached_input=100, output=10),
                           _call(2, uncached_input=150, output=10)])
    assert none.measured == none.ceiling and none.realized == 0.0
    perfect = episode_bounds([_call(1, uncached_input=100, output=10),
                              _call(2, uncached_input=40, cached_input=110, output=10)])
    assert perfect.measured == perfect.floor and perfect.realized == 1.0


def test_cell_bounds_sum_episodes() -> None:
    e1 = [_call(1, uncached_input=100, output=10)]
    e2 = [_call(1, uncached_input=50, output=5), _call(2, cached_input=55, uncached_input=5,
                                                        output=5)]
    cell = cell_bounds([e1, e2])
    assert cell == episode_bounds(e1) + episode_bounds(e2)
    assert cell.ceiling == 110 + (55 + 65)
    assert ComputeBounds().realized is None
