"""How the report scores a question and labels a cell (shared by every study table)."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import mean

from memdir.study._records import CellStatus, QuestionRecord

__all__ = ["LABEL", "attribution_percent", "cell_label", "percent", "primary_score",
           "score_name"]

LABEL = ["benchmark", "conversation", "variant", "builder", "searcher", "harness"]
"""The columns that name a cell in a table row."""


def primary_score(record: QuestionRecord, use_judge: bool = False) -> float | None:
    """The score a table reports: judge 0/1, else option match 0/1, else token F1."""
    g = record.grades
    if use_judge:
        return None if g.judge_correct is None else float(g.judge_correct)
    if g.option_correct is not None:
        return float(g.option_correct)
    return g.f1


def score_name(records: Iterable[QuestionRecord]) -> str:
    """What :func:`primary_score` measures on these records (without the judge)."""
    if any(r.grades.option_correct is not None for r in records):
        return "option match %"
    return "token F1"


def percent(values: Iterable[float | None]) -> float | None:
    """The mean of the present values x 100; None when none is present."""
    present = [v for v in values if v is not None]
    return 100 * mean(present) if present else None


def cell_label(status: CellStatus) -> list[str | None]:
    """The :data:`LABEL` columns of a cell."""
    c = status.cell
    return [c.dataset_key, c.conversation, c.variant, c.builder_model, c.search_model,
            c.harness]


def attribution_percent(records: Iterable[QuestionRecord]) -> float | None:
    """The mean attribution grade x 100 over the records that have one; None if none has."""
    scores = [mean(r.grades.attribution.values()) for r in records if r.grades.attribution]
    return 100 * mean(scores) if scores else None
