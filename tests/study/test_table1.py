"""Table 1 as the paper lays it out: a row per variant, a tier's conversations pooled.

A run folder is written from the record types: three PersonaMem 32k contexts and
one LoCoMo conversation, two variants each. PersonaMem answers carry option match
and the judge's attribution grade only (no judge correctness), LoCoMo answers the
judge's correctness and attribution. Every figure is compared with the records.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.agents import EpisodeRecord
from memdir.runs import Table, write_record
from memdir.study import Cell, CellStatus, Grades, QuestionRecord, load_run
from memdir.study._report import build_tables

SEARCHER = "openai/gpt-5.4-mini"
CONTEXTS = {"ctx-a": 10, "ctx-b": 12, "ctx-c": 10}  # the paper's 32 questions
VARIANTS = ("verbatim", "chunk")


EPISODE = EpisodeRecord(role="search", model=SEARCHER, prompt_name="p", prompt_hash="h",
                        max_rounds=40)


def _attribution(score: float) -> dict[str, float]:
    return {"citation_correctness": score, "citation_relevance": score, "aggregation": 1.0}


def _persona(cell: Cell, i: int) -> QuestionRecord:
    right = i % 4 != 0 if cell.variant == "verbatim" else i % 2 == 0
    return QuestionRecord(cell=cell.key, question_id=f"{cell.conversation}-{i}", order=i,
                          category=1, category_name="recall", question="?", gold="(a)",
                          answer="(a)" if right else "(b)", episode=EPISODE,
                          grades=Grades(option_correct=right,
                                        attribution=_attribution(1.0 if right else 0.5)))


def _locomo(cell: Cell, i: int) -> QuestionRecord:
    return QuestionRecord(cell=cell.key, question_id=f"q{i}", order=i, category=4,
                          category_name="single-hop", question="?", gold="g", answer="a",
                          episode=EPISODE, grades=Grades(f1=0.5, judge_correct=i % 2,
                                        attribution=_attribution(0.5)))


def _write(root: Path, cell: Cell, records: list[QuestionRecord]) -> None:
    folder = root / "cells" / cell.key
    for record in records:
        write_record(folder / "records" / f"{record.question_id}.json", record)
    write_record(folder / "status.json", CellStatus(cell=cell, status="complete",
                                                    questions=len(records),
                                                    answered=len(records)))


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Table]:
    root = tmp_path_factory.mktemp("table1")
    for variant in VARIANTS:
        for context, n in CONTEXTS.items():
            cell = Cell(benchmark="personamem", tier="32k", conversation=context,
                        variant=variant, builder_model=None, search_model=SEARCHER,
                        harness="center")
            _write(root, cell, [_persona(cell, i) for i in range(1, n + 1)])
        cell = Cell(benchmark="locomo", tier=None, conversation="conv-50", variant=variant,
                    builder_model=None, search_model=SEARCHER, harness="center")
        _write(root, cell, [_locomo(cell, i) for i in range(1, 11)])
    return {t.name: t for t in build_tables(load_run(root))}


def _rows(table: Table) -> dict[str, dict[str, object]]:
    return {str(row[table.columns.index("variant")]): dict(zip(table.columns, row, strict=True))
            for row in table.rows}


def _expected(variant: str) -> tuple[float, float]:
    """Option match % and attribution % over the 32 pooled PersonaMem questions."""
    right = [(i % 4 != 0 if variant == "verbatim" else i % 2 == 0)
             for n in CONTEXTS.values() for i in range(1, n + 1)]
    attribution = [(1.0 + 1.0 + 1.0) / 3 if r else (0.5 + 0.5 + 1.0) / 3 for r in right]
    return 100 * sum(right) / len(right), 100 * sum(attribution) / len(attribution)


def test_the_three_32k_contexts_are_one_row_per_variant(tables: dict[str, Table]) -> None:
    rows = _rows(tables["table1-personamem-32k"])
    assert set(rows) == set(VARIANTS)  # one row each, not three
    for variant, row in rows.items():
        score, attribution = _expected(variant)
        assert row["n"] == 32 and row["conversation"] == "3 pooled"
        assert row["option match %"] == pytest.approx(score)
        assert row["judged"] == 0 and row["judge %"] is None
        # graded for attribution only, as the paper grades PersonaMem: still reported
        assert row["attribution graded"] == 32
        assert row["attribution %"] == pytest.approx(attribution)


def test_the_headline_grid_has_a_row_per_variant_and_a_column_pair_per_test_set(
        tables: dict[str, Table]) -> None:
    table = tables["table1"]
    assert table.columns == ["variant", "builder", "searcher", "harness",
                             "locomo n", "locomo judge %", "locomo attribution %",
                             "personamem-32k n", "personamem-32k option match %",
                             "personamem-32k attribution %"]
    rows = _rows(table)
    assert set(rows) == set(VARIANTS)
    for variant, row in rows.items():
        score, attribution = _expected(variant)
        assert row["personamem-32k n"] == 32
        assert row["personamem-32k option match %"] == pytest.approx(score)
        assert row["personamem-32k attribution %"] == pytest.approx(attribution)
        assert row["locomo n"] == 10 and row["locomo judge %"] == pytest.approx(50.0)
        assert row["locomo attribution %"] == pytest.approx(100 * 2 / 3)


def test_an_unjudged_run_names_token_f1_in_the_grid(tmp_path: Path) -> None:
    cell = Cell(benchmark="locomo", tier=None, conversation="conv-50", variant="verbatim",
                builder_model=None, search_model=SEARCHER, harness="center")
    records = [QuestionRecord(cell=cell.key, question_id=f"q{i}", order=i, category=4,
                              category_name="single-hop", question="?", gold="g", answer="a",
                              episode=EPISODE, grades=Grades(f1=0.25)) for i in range(3)]
    _write(tmp_path, cell, records)
    table = {t.name: t for t in build_tables(load_run(tmp_path))}["table1"]
    row = _rows(table)["verbatim"]
    assert row["locomo token F1"] == pytest.approx(25.0) and row["locomo attribution %"] is None
