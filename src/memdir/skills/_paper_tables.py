"""The skill setting's headline tables as the paper lays them out: Tables 5, 15 and 16.

- **Table 5**: success rate per memory variant and execution tier, a row per
  set-up (protocol, variant, curator, harness) and, per execution model, the
  share of tasks solved (a three-chain cell pools its chains, so its rate is the
  micro rate over all its tasks) and the deployment cost per solved task.
- **Table 15**: the same rates split by goal family, with the micro rate over
  all families beside them (it equals Table 5's).
- **Table 16**: the cost of each cell split by role, each role priced at its own
  model's rates: build (the curator), search (the retriever) and execution, then
  deployment (search plus execution), the share the execution agent takes of it,
  and deployment and build per solved task. Dollars are the only figure that
  adds across roles, since the roles run different models.

The paper text we hold describes these tables in prose only (which figures they
hold, not their grids); the layouts follow that prose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir.agents import PriceTable
from memdir.runs import MISSING, Table, Value
from memdir.skills._families import FAMILIES
from memdir.skills._run import ROLES, Role, StepRecord

if TYPE_CHECKING:  # the report imports these tables; they only read its cells
    from memdir.skills._report import CellReport

__all__ = ["table5", "table15", "table16"]


def _rate(steps: list[StepRecord]) -> float | None:
    return 100 * sum(s.success for s in steps) / len(steps) if steps else None


def _cost(steps: list[StepRecord], role: Role, prices: PriceTable) -> float | None:
    costs = [s.cost(role, prices) for s in steps]
    return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def _sum(*values: float | None) -> float | None:
    return None if any(v is None for v in values) else sum(v or 0.0 for v in values)


def _per_solved(value: float | None, solved: int, scale: float = 1.0) -> float | None:
    return None if value is None or not solved else scale * value / solved


def _setup(report: CellReport) -> tuple[str, str, str, str]:
    cell = report.cell
    return (cell.protocol, cell.variant, cell.curator or MISSING, cell.harness)


def _label(report: CellReport) -> str:
    return report.cell.key if report.complete else f"{report.cell.key} (unfinished)"


def table5(cells: list[CellReport], prices: PriceTable) -> Table:
    """Table 5: success % and deployment cents per solved task, per set-up and execution tier."""
    tiers = sorted({c.cell.execution for c in cells})
    columns = ["protocol", "variant", "curator", "harness"]
    for tier in tiers:
        columns += [f"{tier} tasks", f"{tier} success %", f"{tier} deploy cents/solved"]
    table = Table("table5", "Table 5 — success per variant and execution tier", columns,
                  notes=["success %: tasks solved / tasks played x 100 (a three-chain cell "
                         "pools its three chains: the micro rate)",
                         "deploy cents/solved: retrieval plus execution dollars x 100 over "
                         f"the tasks solved; {MISSING} where a model has no price or nothing "
                         "was solved", "a cell still running is marked unfinished in the "
                         "tables below and counted as far as it got"])
    rows: dict[tuple[str, str, str, str], dict[str, CellReport]] = {}
    for report in cells:
        rows.setdefault(_setup(report), {})[report.cell.execution] = report
    for setup, by_tier in sorted(rows.items()):
        row: list[Value] = [*setup]
        for tier in tiers:
            found = by_tier.get(tier)
            steps = found.steps if found is not None else []
            solved = sum(s.success for s in steps)
            deploy = _sum(_cost(steps, "retrieval", prices), _cost(steps, "execution", prices))
            row += [len(steps) or None, _rate(steps),
                    _per_solved(deploy, solved, 100.0) if steps else None]
        table.rows.append(row)
    return table


def table15(cells: list[CellReport]) -> Table:
    """Table 15: success % per goal family, with the micro rate over every family."""
    families = [f for f in FAMILIES if any(s.family == f for c in cells for s in c.steps)]
    table = Table("table15", "Table 15 — success per goal family (%)",
                  ["cell", "tasks", "solved", "micro %", *(f"{f} %" for f in families)],
                  notes=["a rate per family over that family's tasks; micro: over every task "
                         "(Table 5's rate); — where the cell played no task of a family"])
    for report in cells:
        steps = report.steps
        table.rows.append([_label(report), len(steps), sum(s.success for s in steps),
                           _rate(steps),
                           *(_rate([s for s in steps if s.family == f]) for f in families)])
    return table


def _money(value: float | None) -> str | None:
    return None if value is None else f"${value:.4f}"


def table16(cells: list[CellReport], prices: PriceTable) -> Table:
    """Table 16: each cell's cost by role (build, search, execution) and per solved task."""
    table = Table("table16", "Table 16 — cost by role (dollars, each role at its own rates)",
                  ["cell", "execution model", "solved", "build (curator)", "search (retriever)",
                   "execution", "deployment", "execution share %", "deployment / solved",
                   "build / solved"],
                  notes=["deployment = search + execution; build = curation; each role "
                         "priced at its own model's rates, so only dollars add across roles",
                         f"{MISSING}: a model of that role has no price (or nothing was solved)"])
    for report in cells:
        steps = report.steps
        solved = sum(s.success for s in steps)
        cost = {role: _cost(steps, role, prices) for role in ROLES}
        deploy = _sum(cost["retrieval"], cost["execution"])
        share = (None if deploy is None or cost["execution"] is None or not deploy
                 else 100 * cost["execution"] / deploy)
        table.rows.append([
            _label(report), report.cell.execution, solved, _money(cost["curation"]),
            _money(cost["retrieval"]), _money(cost["execution"]), _money(deploy), share,
            _money(_per_solved(deploy, solved)), _money(_per_solved(cost["curation"], solved))])
    return table
