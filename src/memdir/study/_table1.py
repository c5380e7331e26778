"""Table 1: correctness and attribution per memory variant and test set.

The paper's Table 1 has a row per memory variant and, per test set (LoCoMo,
PersonaMem 32k, PersonaMem 128k, REALTALK), the share of questions answered
correctly and the attribution score. A test set is a benchmark tier, not a
conversation: PersonaMem 32k's three contexts are one test set of 32 questions,
so their cells are pooled into one row. memdir reports that grid (``table1``)
and, per test set, the detail behind it (``table1-<test set>``): the score over
every question and without the defective-gold items, per category, the judge's
figures and attribution.

Correctness is the paper's measure for the test set: the judge's 0/1 on the
free-text benchmarks when every question of the set was judged, exact option
match on PersonaMem; a run without a judge shows token F1 instead, and the
column says which. Attribution is the mean of the judge's three 0/0.5/1 scores
over every question that has them (PersonaMem's are graded for attribution
only), x 100.
"""

from __future__ import annotations

from collections.abc import Iterable

from memdir.runs import Table
from memdir.study._load import RunRecords
from memdir.study._records import CellStatus, QuestionRecord
from memdir.study._scores import attribution_percent, percent, primary_score, score_name

__all__ = ["SETUP", "Setup", "pooled_setups", "table_correctness", "table_headline"]

SETUP = ["variant", "builder", "searcher", "harness"]
"""The columns that name a set-up: a cell without its test set and conversation."""
Setup = tuple[str, str | None, str, str]
_ORDER = ("locomo", "personamem-32k", "personamem-128k", "realtalk")


def _setup(status: CellStatus) -> Setup:
    c = status.cell
    return c.variant, c.builder_model, c.search_model, c.harness


def _test_set_order(key: str) -> tuple[int, str]:
    return (_ORDER.index(key) if key in _ORDER else len(_ORDER), key)


def pooled_setups(run: RunRecords) -> dict[str, dict[Setup, list[CellStatus]]]:
    """Complete cells by test set, then by set-up: a tier's conversations pooled."""
    sets: dict[str, dict[Setup, list[CellStatus]]] = {}
    for status in run.complete:
        sets.setdefault(status.cell.dataset_key, {}).setdefault(_setup(status), []).append(status)
    return {k: sets[k] for k in sorted(sets, key=_test_set_order)}


def _records(run: RunRecords, cells: Iterable[CellStatus]) -> list[QuestionRecord]:
    return [r for s in cells for r in run.records[s.cell.key]]


def _conversations(cells: list[CellStatus]) -> str:
    names = [s.cell.conversation for s in cells]
    return names[0] if len(names) == 1 else f"{len(names)} pooled"


def _measure(records: list[QuestionRecord]) -> tuple[str, bool]:
    """The column name of a test set's correctness, and whether it is the judge's."""
    judged = bool(records) and all(r.grades.judge_correct is not None for r in records)
    if judged:
        return "judge %", True
    return score_name(records), False


def table_headline(run: RunRecords) -> Table:
    """The paper's Table 1 grid: a row per set-up, correctness and attribution per test set."""
    sets = pooled_setups(run)
    measures = {k: _measure(_records(run, (s for cells in v.values() for s in cells)))
                for k, v in sets.items()}
    columns = [*SETUP]
    for key, (name, _) in measures.items():
        columns += [f"{key} n", f"{key} {name}", f"{key} attribution %"]
    table = Table("table1", "Table 1 — correctness and attribution per variant and test set",
                  columns, notes=[
                      "a test set is a benchmark tier: its conversations are pooled into "
                      "one figure (PersonaMem 32k's three contexts make one 32-question set)",
                      "correctness: the judge's % where every question of the test set was "
                      "judged; option match % on PersonaMem; token F1 x 100 in a run "
                      "without a judge (the column names it)",
                      "attribution %: the mean of the judge's three attribution scores over "
                      "every question that has them; — where none was graded",
                      "table1-<test set> below gives categories, defective gold and counts"])
    setups = sorted({s for v in sets.values() for s in v},
                    key=lambda s: tuple("" if x is None else x for x in s))
    for setup in setups:
        row: list[str | float | int | None] = [*setup]
        for key, (_, judge) in measures.items():
            records = _records(run, sets[key].get(setup, []))
            row += [len(records) or None,
                    percent(primary_score(r, judge) for r in records),
                    attribution_percent(records)]
        table.rows.append(row)
    return table


def table_correctness(run: RunRecords) -> list[Table]:
    """Table 1 in detail, one per test set: a row per set-up, its conversations pooled.

    The score columns are named by what they measure (token F1, or option match on
    PersonaMem). Where a cell was judged, the judge's columns give its correctness
    over the judged questions and, as the paper's "without defective gold" figure,
    over those of them whose gold is not defective.
    """
    tables = []
    for key, setups in pooled_setups(run).items():
        every = _records(run, (s for cells in setups.values() for s in cells))
        cats = sorted({(r.category, r.category_name) for r in every})
        metric = score_name(every)
        table = Table(
            f"table1-{key}", f"Table 1 — correctness, {key}",
            ["benchmark", "conversation", *SETUP, "n", metric, f"{metric} w/o defective",
             "defective", *(f"{n} ({c}) {metric}" for c, n in cats), "judged", "judge %",
             "judge % w/o defective", "attribution graded", "attribution %"],
            notes=[f"{metric}: x 100 over every question of the set-up (token F1 on LoCoMo "
                   "and REALTALK, exact option match on PersonaMem)",
                   "conversation: the cell's conversation, or how many of the test set's "
                   "conversations were pooled into the row",
                   "judge %: the judge's correct/incorrect over the judged questions; "
                   "judge % w/o defective: the same grades without the questions whose "
                   "gold is defective (the paper's column); — where no question was judged",
                   "attribution %: over every question with an attribution grade (on "
                   "PersonaMem the judge grades attribution only)",
                   "only complete cells; a failed cell is listed below, never scored"])
        for setup, cells in setups.items():
            records = _records(run, cells)
            kept = [r for r in records if not r.defective_gold]
            judged = [r for r in records if r.grades.judge_correct is not None]
            per_cat = [percent(primary_score(r) for r in records if r.category == c)
                       for c, _ in cats]
            table.rows.append([
                cells[0].cell.dataset_key, _conversations(cells), *setup, len(records),
                percent(primary_score(r) for r in records),
                percent(primary_score(r) for r in kept), len(records) - len(kept), *per_cat,
                len(judged), percent(primary_score(r, True) for r in judged),
                percent(primary_score(r, True) for r in judged if not r.defective_gold),
                sum(1 for r in records if r.grades.attribution),
                attribution_percent(records)])
        tables.append(table)
    return tables
