"""Reports of a run, computed from its records alone (nothing is re-run).

Tables numbered as in the paper: Table 1 correctness and attribution per variant
and test set (a tier's conversations pooled), with its detail per test set (per
category, with and without the defective-gold items, the judge's grades); Table 2
search effort and cost per query, with compute bounds per cell; Table 3 build
cost and store profile; Table 4 the shape and taxonomy panels of every store;
Table 6 the builder ladder; ladder grids (builder x searcher, the paper's Table
7) where a role had several models; Tables 9 and 10 per harness; retrieval
diagnostics; paired sign tests, per conversation and pooled; Table 11 the
configuration of record. Figures: correctness and search cost per cell with
intervals, and cost against correctness (:mod:`memdir.study._figures`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from statistics import mean

from memdir.agents import cell_bounds
from memdir.runs import Table
from memdir.study._config_table import table_configuration
from memdir.study._figures import Figure, write_figures
from memdir.study._harness_tables import table_harness_cost, table_harness_quality
from memdir.study._ladders import table_ladders
from memdir.study._load import RunRecords, load_run
from memdir.study._records import CellStatus, QuestionRecord
from memdir.study._scores import (
    LABEL,
    cell_label,
    percent,
    primary_score,
)
from memdir.study._stats import pooled_sign_test, sign_test
from memdir.study._store_tables import table_builder_ladder, table_shape, table_stores
from memdir.study._table1 import table_correctness, table_headline

__all__ = ["WRONG_F1", "build_tables", "primary_score", "write_report"]

WRONG_F1 = 0.5
"""Without a judge, an answer with token F1 below this counts as wrong in the diagnostics."""


def _mean(records: list[QuestionRecord], get: Callable[[QuestionRecord], float]) -> float:
    return mean(get(r) for r in records) if records else 0.0


def table_effort(run: RunRecords) -> Table:
    """Table 2: per-query search effort, tokens and cost; compute bounds per cell."""
    table = Table("table2", "Table 2 — search effort and cost per query",
                  [*LABEL, "n", "rounds", "tool calls", "uncached in", "cached in", "output",
                   "reasoning", "cents/query", "judge cents", "ceiling", "floor", "measured",
                   "realized %"],
                  notes=["tokens are means per query; ceiling/floor/measured are the cell's "
                         "compute bounds in tokens (memdir.agents.cell_bounds)",
                         "cents: prices applied to the records; — where a rate is unknown"])
    for status in run.complete:
        rs = run.records[status.cell.key]
        costs = [r.cost(run.prices) for r in rs]
        cents = None if any(c is None for c in costs) else 100 * mean(c or 0.0 for c in costs)
        judge = [r.grades.judge_cost for r in rs if r.grades.judge_usage is not None]
        judge_cents = (None if not judge or any(c is None for c in judge)
                       else 100 * sum(c or 0.0 for c in judge))
        b = cell_bounds(r.episode for r in rs)
        table.rows.append([
            *cell_label(status), len(rs), _mean(rs, lambda r: r.rounds),
            _mean(rs, lambda r: r.tool_calls), _mean(rs, lambda r: r.usage.uncached_input),
            _mean(rs, lambda r: r.usage.cached_input), _mean(rs, lambda r: r.usage.output),
            _mean(rs, lambda r: r.usage.reasoning), cents, judge_cents, b.ceiling, b.floor,
            b.measured, None if b.realized is None else 100 * b.realized])
    return table


def _wrong(record: QuestionRecord) -> bool:
    g = record.grades
    if g.judge_correct is not None:
        return g.judge_correct == 0
    if g.option_correct is not None:
        return not g.option_correct
    return (g.f1 or 0.0) < WRONG_F1


def table_diagnostics(run: RunRecords) -> Table:
    """Retrieval diagnostics: evidence seen and cited, and why wrong answers went wrong."""
    table = Table("diagnostics", "Retrieval diagnostics",
                  [*LABEL, "with evidence", "seen %", "cited %", "wrong",
                   "wrong: never found %", "wrong: found, misread %"],
                  notes=["seen: an evidence locator appeared in a tool result the agent saw; "
                         "cited: it lies in the text a resolved citation points at",
                         f"wrong: judge 0, option wrong, or (unjudged) token F1 < {WRONG_F1}; "
                         "only questions with evidence locators count"])
    for status in run.complete:
        rs = [r for r in run.records[status.cell.key] if r.evidence]
        wrong = [r for r in rs if _wrong(r)]
        never = sum(1 for r in wrong if not r.evidence_seen)
        replayed = status.cell.harness != "shell"  # shell commands are never replayed
        split = bool(wrong) and replayed
        table.rows.append([
            *cell_label(status), len(rs),
            percent([float(bool(r.evidence_seen)) for r in rs]) if replayed else None,
            percent([float(bool(r.evidence_cited)) for r in rs]), len(wrong),
            100 * never / len(wrong) if split else None,
            100 * (len(wrong) - never) / len(wrong) if split else None])
    return table


def table_sign_tests(run: RunRecords) -> Table:
    """Paired sign tests between every two complete cells on the same conversation."""
    table = Table("sign-tests", "Paired sign tests (same questions)",
                  ["benchmark", "conversation", "A", "B", "items", "A wins", "B wins", "ties",
                   "mean diff", "p"], digits=4,
                  notes=["score per question: judge 0/1 when both cells are fully judged, "
                         "else option match or token F1; exact two-sided binomial, ties dropped"])
    for a, b in combinations(run.complete, 2):
        if (a.cell.dataset_key, a.cell.conversation) != (b.cell.dataset_key, b.cell.conversation):
            continue
        ra, rb = run.records[a.cell.key], run.records[b.cell.key]
        judged = all(r.grades.judge_correct is not None for r in [*ra, *rb])
        sa = {r.question_id: s for r in ra if (s := primary_score(r, judged)) is not None}
        sb = {r.question_id: s for r in rb if (s := primary_score(r, judged)) is not None}
        if not set(sa) & set(sb):
            continue
        t = sign_test(sa, sb)
        table.rows.append([a.cell.dataset_key, a.cell.conversation, _short(a), _short(b),
                           t.items, t.a_wins, t.b_wins, t.ties, t.mean_diff,
                           None if t.p_value is None else f"{t.p_value:.3g}"])
    return table


def _p(value: float | None) -> str | None:
    return None if value is None else f"{value:.3g}"


def table_pooled_sign_tests(run: RunRecords) -> Table:
    """Sign tests pooled over a tier's conversations, for two set-ups run on two or more.

    A set-up is everything but the conversation (variant, builder, searcher, harness);
    items are paired within each conversation, then counted together, as the paper
    pools its three PersonaMem 32k conversations.
    """
    table = Table("pooled-sign-tests", "Sign tests pooled over a tier's conversations",
                  ["benchmark", "A", "B", "conversations", "items", "A wins", "B wins", "ties",
                   "p (two-sided)", "p (A better)", "p (B better)"], digits=4,
                  notes=["items paired within each conversation, then pooled; exact binomial, "
                         "ties dropped; one-sided p in each direction"])
    setups: dict[tuple[str, str], dict[str, CellStatus]] = {}
    for status in run.complete:
        key = (status.cell.dataset_key, _short(status))
        setups.setdefault(key, {})[status.cell.conversation] = status
    for (a_key, a_cells), (b_key, b_cells) in combinations(setups.items(), 2):
        shared = sorted(set(a_cells) & set(b_cells))
        if a_key[0] != b_key[0] or len(shared) < 2:
            continue
        pairs = []
        for conversation in shared:
            ra = run.records[a_cells[conversation].cell.key]
            rb = run.records[b_cells[conversation].cell.key]
            judged = all(r.grades.judge_correct is not None for r in [*ra, *rb])
            pairs.append(({r.question_id: v for r in ra if (v := primary_score(r, judged))
                           is not None},
                          {r.question_id: v for r in rb if (v := primary_score(r, judged))
                           is not None}))
        try:
            t = pooled_sign_test(pairs)
        except ValueError:
            continue
        table.rows.append([a_key[0], a_key[1], b_key[1], t.groups, t.items, t.a_wins,
                           t.b_wins, t.ties, _p(t.p_value), _p(t.p_a_better),
                           _p(t.p_b_better)])
    return table


def _short(status: CellStatus) -> str:
    c = status.cell
    parts = [c.variant, c.search_model]
    if c.builder_model:
        parts.insert(1, f"built by {c.builder_model}")
    if c.harness != "center":
        parts.append(c.harness)
    return ", ".join(parts)


def _failed(run: RunRecords) -> Table:
    table = Table("failed", "Cells not reported", [*LABEL, "answered", "questions", "reason"],
                  empty="(none: every cell completed)")
    for s in run.failed:
        table.rows.append([*cell_label(s), s.answered, s.questions, s.reason])
    return table


def build_tables(run: RunRecords) -> list[Table]:
    """Every table of the report, in order (the paper's number in each title).

    A run without a complete cell has no correctness table at all (its cells are
    listed as not reported).
    """
    headline = [table_headline(run)] if run.complete else []
    return [*headline, *table_correctness(run), table_effort(run),
            table_stores(run), table_shape(run), table_builder_ladder(run),
            *table_ladders(run, primary_score), table_harness_quality(run),
            table_harness_cost(run), table_diagnostics(run), table_sign_tests(run),
            table_pooled_sign_tests(run), _failed(run), table_configuration(run)]


def _figure_section(figures: list[Figure]) -> str:
    if not figures:
        return "## Figures\n\n(no complete cell to draw)\n"
    lines = ["## Figures", "",
             "Intervals: 95% percentile bootstrap over the cell's questions (2,000 "
             "resamples, the run's seed).", ""]
    for f in figures:
        lines += [f"### {f.title}", "", f"![{f.title}]({f.path.name})", ""]
    return "\n".join(lines)


def write_report(folder: str | Path, fmt: str = "md", *, figures: bool = True
                 ) -> tuple[str, list[Path]]:
    """Compute the report of a run folder and write it under ``<run>/report/``.

    Args:
        folder: The run folder.
        fmt: ``md`` (one ``report.md``) or ``csv`` (one CSV per table).
        figures: Also draw the figures (PNG, beside the tables; ``report.md`` links them).

    Returns:
        The markdown text, and the files written (tables, then figures).

    Raises:
        ValueError: Unknown format.
        FileNotFoundError: The folder holds no run.
    """
    if fmt not in ("md", "csv"):
        raise ValueError(f"unknown report format {fmt!r}; use md or csv")
    run = load_run(folder)
    tables = build_tables(run)
    out = Path(folder) / "report"
    out.mkdir(exist_ok=True)
    drawn = write_figures(run, out) if figures else []
    text = f"# Study report: {Path(folder).name}\n\n" + "\n".join(t.markdown() for t in tables)
    if figures:
        text += "\n" + _figure_section(drawn)
    pictures = [f.path for f in drawn]
    if fmt == "md":
        path = out / "report.md"
        path.write_text(text, "utf-8")
        return text, [path, *pictures]
    written = []
    for t in tables:
        path = out / f"{t.name}.csv"
        path.write_text(t.csv(), "utf-8")
        written.append(path)
    return text, [*written, *pictures]
