"""Ladder grids: one table per store form where more than one model held a role.

The builder ladder varies the management model, the searcher ladder the search
model, and a config may vary both (every search model reads every store). A grid
has a row per builder model and, per search model, the score, the search cost
per query and the search agent's tool calls per query (the paper's Table 7
columns), pooled over the questions of every complete cell with that pair on
the same benchmark, variant and harness (so PersonaMem 32k's three contexts make
one figure, as in the paper's ladders).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from statistics import mean

from memdir.agents import PriceTable
from memdir.runs import MISSING, Table
from memdir.study._load import RunRecords
from memdir.study._records import CellStatus, QuestionRecord

__all__ = ["ScoreFn", "table_ladders"]

ScoreFn = Callable[[QuestionRecord], float | None]

def _group(status: CellStatus) -> tuple[str, str, str]:
    return status.cell.dataset_key, status.cell.variant, status.cell.harness


def _score(records: list[QuestionRecord], score: ScoreFn) -> float | None:
    scores = [s for r in records if (s := score(r)) is not None]
    return 100 * mean(scores) if scores else None


def _cents(records: list[QuestionRecord], prices: PriceTable) -> float | None:
    costs = [r.cost(prices) for r in records]
    if not costs or any(c is None for c in costs):
        return None
    return 100 * mean(c or 0.0 for c in costs)


def _tool_calls(records: list[QuestionRecord]) -> float | None:
    return mean(r.tool_calls for r in records) if records else None


def table_ladders(run: RunRecords, score: ScoreFn) -> list[Table]:
    """A grid (builder x searcher) for each benchmark, variant and harness with a ladder.

    Args:
        run: The run's records.
        score: A question's score in [0, 1] (the report's Table 1 rule), None if ungraded.
    """
    groups: dict[tuple[str, str, str], list[CellStatus]] = defaultdict(list)
    for status in run.complete:
        groups[_group(status)].append(status)
    tables = []
    for (dataset, variant, harness), statuses in groups.items():
        builders = sorted({s.cell.builder_model or MISSING for s in statuses})
        searchers = sorted({s.cell.search_model for s in statuses})
        if len(builders) * len(searchers) < 2:
            continue
        pooled: dict[tuple[str, str], list[QuestionRecord]] = defaultdict(list)
        for s in statuses:
            pooled[(s.cell.builder_model or MISSING, s.cell.search_model)].extend(
                run.records[s.cell.key])
        suffix = "" if harness == "center" else f", {harness}"
        table = Table(
            f"ladder-{dataset}-{variant}-{harness}".replace("+", "-"),
            f"Table 7 — builder x searcher, {dataset}, {variant}{suffix}",
            ["builder", *(f"{col} {m}" for m in searchers
                          for col in ("score", "cents/q", "tool calls/q"))],
            notes=["rows: builder model; per search model the score (as in Table 1), the "
                   "search cents per query and the search agent's tool calls per query, "
                   "pooled over the questions of the complete cells of that pair; — where "
                   "the pair has no complete cell or a price is unknown"])
        for builder in builders:
            row: list[str | float | int | None] = [builder]
            for searcher in searchers:
                records = pooled.get((builder, searcher), [])
                row.extend([_score(records, score), _cents(records, run.prices),
                            _tool_calls(records)])
            table.rows.append(row)
        tables.append(table)
    return tables
