"""The example in docs/agents.md runs as written; the cost doc states the shipped rates."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_agents_doc_example_runs(tmp_path: Path) -> None:
    text = (DOCS / "agents.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks, "docs/agents.md lost its example"
    for block in blocks:
        exec(compile(block, "docs/agents.md", "exec"), {"workdir": tmp_path})  # noqa: S102
    assert (tmp_path / "memories" / "people" / "ana.md").is_file()


def test_costs_doc_matches_the_price_table() -> None:
    from memdir.agents import PriceTable

    text = (DOCS / "costs.md").read_text(encoding="utf-8")
    price = PriceTable.load().price("openai/gpt-5.4-mini")
    assert price is not None
    assert f"${price.input:.2f} / M uncached input" in text
    assert f"${price.cached_input:.3f} / M" in text and f"${price.output:.2f} / M output" in text
