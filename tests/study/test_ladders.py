"""Ladder grids: builder x searcher, pooled over a test set's conversations."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.agents import (
    CallRecord,
    EpisodeRecord,
    ModelPrice,
    PriceTable,
    ToolCallRecord,
    Usage,
)
from memdir.study import (
    Cell,
    CellStatus,
    Grades,
    QuestionRecord,
    RunRecords,
    build_tables,
    primary_score,
)
from memdir.study._ladders import table_ladders


def _cell(builder: str | None, searcher: str, conversation: str = "conv-50",
          variant: str = "curated", benchmark: str = "locomo") -> Cell:
    return Cell(benchmark=benchmark, tier="32k" if benchmark == "personamem" else None,
                conversation=conversation, variant=variant, builder_model=builder,
                search_model=searcher, harness="center")


PRICED = PriceTable({m: ModelPrice(output=1.0) for m in ("s/mini", "s/big", "s/a")})
"""$1 per million output tokens for every search model but s/b (unpriced)."""


def _records(cell: Cell, scores: list[float], cost: float | None) -> list[QuestionRecord]:
    """Records whose episodes spent ``cost`` dollars by :data:`PRICED` (None: unpriced)."""
    tokens = 1 if cost is None else round(cost * 1_000_000)
    def episode(n: int) -> EpisodeRecord:
        calls = [ToolCallRecord(id=str(k), name="grep", arguments={}, is_error=False,
                                result="") for k in range(n + 1)]
        call = CallRecord(role="search", round=1, model=cell.search_model, prompt_hash="h",
                          stop_reason="stop", latency_s=0.0, usage=Usage(output=tokens),
                          tool_calls=calls)
        return EpisodeRecord(role="search", model=cell.search_model, prompt_name="p",
                             prompt_hash="h", max_rounds=1, calls=[call])

    return [QuestionRecord(cell=cell.key, question_id=f"q{n}", order=n, category=1,
                           category_name="single-hop", question="?", gold="g", answer="a",
                           grades=Grades(f1=s), episode=episode(n))
            for n, s in enumerate(scores)]


def _run(*cells: tuple[Cell, list[float], float | None, bool]) -> RunRecords:
    run = RunRecords(Path("."), [], prices=PRICED)
    for cell, scores, cost, complete in cells:
        run.statuses.append(CellStatus(cell=cell, status="complete" if complete else "failed"))
        if complete:
            run.records[cell.key] = _records(cell, scores, cost)
    return run


def test_a_builder_by_searcher_grid_with_scores_and_cents() -> None:
    run = _run(
        (_cell("b/nano", "s/mini"), [0.5, 1.0], 0.02, True),
        (_cell("b/nano", "s/big"), [1.0, 1.0], 0.10, True),
        (_cell("b/mini", "s/mini"), [0.0, 0.5], 0.03, True),
        (_cell("b/mini", "s/big"), [1.0], 0.12, False),  # failed: never in a grid
        (_cell(None, "s/mini", variant="verbatim"), [0.25], 0.01, True),  # one pair: no grid
    )
    [table] = table_ladders(run, primary_score)
    assert table.title == "Table 7 — builder x searcher, locomo, curated"
    assert table.columns == ["builder", "score s/big", "cents/q s/big", "tool calls/q s/big",
                             "score s/mini", "cents/q s/mini", "tool calls/q s/mini"]
    # each episode makes one round with (number of the question) + 1 tool calls
    assert table.rows == [
        ["b/mini", None, None, None, 25.0, pytest.approx(3.0), 1.5],
        ["b/nano", 100.0, pytest.approx(10.0), 1.5, 75.0, pytest.approx(2.0), 1.5],
    ]
    assert "ladder-locomo-curated-center" in [t.name for t in build_tables(run)]


def test_a_searcher_ladder_pools_the_conversations_and_says_when_a_price_is_unknown() -> None:
    run = _run(
        (_cell(None, "s/a", "#1", "verbatim", "personamem"), [1.0, 0.0], 0.01, True),
        (_cell(None, "s/a", "#2", "verbatim", "personamem"), [1.0], 0.04, True),
        (_cell(None, "s/b", "#1", "verbatim", "personamem"), [0.0], None, True),
    )
    [table] = table_ladders(run, primary_score)
    # s/a: three questions over two contexts, 2 of 3 right; its cost is the mean per query
    assert table.rows == [["—", pytest.approx(200 / 3), pytest.approx(2.0), 4 / 3, 0.0, None,
                            1.0]]
