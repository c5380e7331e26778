"""The harness study's tables: quality (Table 9) and cost, effort and shape (Table 10).

A harness is the tool set a store is built and searched with (Center, Center+BM25,
Shell). Both tables group complete cells by everything but the harness (benchmark,
conversation, variant, builder, searcher) and give one row per harness of a group,
for the variants a harness applies to; they are drawn only when the run has two
or more harnesses, since with one they would repeat Tables 1 and 2. Each cell's
store is the one its own status names, so a build keyed by harness is read as
that harness's store.
"""

from __future__ import annotations

from statistics import mean

from memdir.builders import variant_spec
from memdir.runs import Table
from memdir.study._config import HARNESSES
from memdir.study._load import RunRecords
from memdir.study._records import CellStatus
from memdir.study._scores import LABEL, attribution_percent, cell_label, percent, primary_score
from memdir.study._store_tables import build_effort, store_of

__all__ = ["harness_cells", "table_harness_cost", "table_harness_quality"]


def harness_cells(run: RunRecords) -> list[CellStatus] | None:
    """The complete harnessed cells, neighbours by harness; None if the run has one harness."""
    cells = [s for s in run.complete if variant_spec(s.cell.variant).harnessed]
    if len({s.cell.harness for s in cells}) < 2:
        return None
    order = {name: i for i, name in enumerate(HARNESSES)}

    def key(s: CellStatus) -> tuple[str, str, str, str, str, int]:
        c = s.cell
        return (c.dataset_key, c.conversation, c.variant, c.builder_model or "",
                c.search_model, order.get(c.harness, len(order)))

    return sorted(cells, key=key)


def _one_harness(run: RunRecords) -> str:
    names = sorted({s.cell.harness for s in run.complete})
    return (f"(one harness in this run: {', '.join(names) or 'none'}; the correctness and "
            "cost tables above cover it)")


def table_harness_quality(run: RunRecords) -> Table:
    """Table 9: each harness's answers on the same questions."""
    table = Table("table9", "Table 9 — answer quality per harness",
                  [*LABEL, "n", "score", "judged", "judge %", "attribution %"],
                  empty=_one_harness(run),
                  notes=["score: token F1 or option match x 100, the correctness table's "
                         "rule; judge % over the judged questions, attribution % over the "
                         "questions with an attribution grade",
                         "a harness applies to the builder and the searcher alike; each "
                         "harness's row reads the store built under it"])
    for status in harness_cells(run) or []:
        records = run.records[status.cell.key]
        judged = [r for r in records if r.grades.judge_correct is not None]
        table.rows.append([*cell_label(status), len(records),
                           percent(primary_score(r) for r in records), len(judged),
                           percent(primary_score(r, True) for r in judged),
                           attribution_percent(records)])
    return table


def table_harness_cost(run: RunRecords) -> Table:
    """Table 10: each harness's search cost per query, build effort and store shape."""
    table = Table("table10", "Table 10 — search cost, build effort and store shape per harness",
                  [*LABEL, "rounds/query", "tool calls/query", "in tok/query",
                   "out tok/query", "cents/query", "build units", "build rounds/unit",
                   "build tool calls/unit", "build $", "files", "folders", "sections",
                   "xrefs", "max depth"], digits=2, empty=_one_harness(run),
                  notes=["per-query figures are means over the cell's questions (in tok counts "
                         "cached input too); build figures over the store's chunks or passes",
                         "— where a price is unknown or the store records no build"])
    for status in harness_cells(run) or []:
        rs = run.records[status.cell.key]
        if not rs:
            continue
        costs = [r.cost(run.prices) for r in rs]
        info = store_of(run, status)
        p = info.profile if info is not None else {}
        effort = build_effort(info.build if info is not None else None)
        table.rows.append([
            *cell_label(status), mean(r.rounds for r in rs), mean(r.tool_calls for r in rs),
            mean(r.usage.input for r in rs), mean(r.usage.output for r in rs),
            None if any(c is None for c in costs) else 100 * mean(c or 0.0 for c in costs),
            effort.get("units"), effort.get("rounds/unit"), effort.get("tool calls/unit"),
            info.build_cost if info is not None else None, p.get("files"), p.get("folders"),
            p.get("sections"), p.get("xrefs"), p.get("max_depth")])
    return table
