"""The cost doc states the shipped rates (tests/test_docs_examples.py runs the examples)."""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_costs_doc_matches_the_price_table() -> None:
    from memdir.agents import PriceTable

    text = (DOCS / "costs.md").read_text(encoding="utf-8")
    price = PriceTable.load().price("openai/gpt-5.4-mini")
    assert price is not None
    assert f"${price.input:.2f} / M uncached input" in text
    assert f"${price.cached_input:.3f} / M" in text and f"${price.output:.2f} / M output" in text
