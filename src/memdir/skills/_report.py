"""Reports of a skill-setting run, from its records only (nothing is replayed or re-run).

``build_report(run_dir)`` reads every cell folder (``cell.json``) and its chains'
step records and writes:

- ``report.md``: success rates per variant and execution tier (the paper's
  Table 5) and per goal family (its Table 15); the cost of each role, build
  (curation), search (retrieval) and execution, deployment and both per solved
  task, priced with :class:`PriceTable` (its Table 16,
  :mod:`memdir.skills._paper_tables`); the compute bounds of each role per
  cell (no-cache ceiling, perfect-cache floor, measured compute, share of the
  achievable caching savings realized; see ``docs/costs.md``); store growth;
  audit findings;
- ``tasks.csv``: one row per task: outcome, execution rounds, the token
  categories of each role, each role's episode bounds (ceiling, floor,
  measured), the store's size after the task.

The execution agent also gets the paper's per-task views: rounds and token
categories per task (its Table 17) and the compute bounds per task, first-turn
context, unique prefill, decode and measured / floor (its Table 18), each a
mean over the cell's tasks (a three-chain cell pools its chains). The figures
of :mod:`memdir.skills._figures` are written beside the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memdir.agents import (
    ComputeBounds,
    PriceTable,
    Usage,
    cell_bounds,
    episode_bounds,
)
from memdir.metrics import measure_store
from memdir.runs import MISSING, Table, Value, read_record
from memdir.skills._chain import ChainManifest
from memdir.skills._config import Cell
from memdir.skills._paper_tables import table5, table15, table16
from memdir.skills._run import ROLES, StepRecord, load_steps
from memdir.store import Store, parse_file

__all__ = ["CellReport", "build_report", "load_run"]

@dataclass
class CellReport:
    """The step records of one cell, by chain."""

    cell: Cell
    chains: dict[str, list[StepRecord]] = field(default_factory=dict)
    planned: dict[str, int] = field(default_factory=dict)
    """Tasks each chain's manifest lists (more than recorded while a cell is unfinished)."""

    @property
    def complete(self) -> bool:
        """Whether every planned task of every chain has its step record."""
        return all(len(self.chains.get(name, [])) == n for name, n in self.planned.items())

    @property
    def steps(self) -> list[StepRecord]:
        """Every step record of every chain."""
        return [s for chain in self.chains.values() for s in chain]


def load_run(run_dir: Path) -> list[CellReport]:
    """Every cell of a run folder with its step records.

    Raises:
        ValueError: the folder holds no cell.
    """
    cells = []
    for cell_file in sorted(run_dir.glob("*/cell.json")):
        cell = read_record(cell_file, Cell)
        report = CellReport(cell)
        for chain_dir in sorted(p for p in cell_file.parent.iterdir() if p.is_dir()):
            steps = load_steps(chain_dir)
            report.chains[chain_dir.name] = [steps[k] for k in sorted(steps)]
            manifest = chain_dir / "chain.json"
            if manifest.is_file():
                planned = read_record(manifest, ChainManifest)
                report.planned[chain_dir.name] = len(planned.task_ids)
        cells.append(report)
    if not cells:
        raise ValueError(f"{run_dir} holds no cell (no */cell.json); give a run's output folder")
    return cells


def _ratio(value: float | None, form: str) -> str | None:
    return None if value is None else format(value, form)


def _bounds_row(cell: str, role: str, episodes: int, bounds: ComputeBounds) -> list[Value]:
    return [cell, role, episodes, bounds.ceiling, bounds.floor, bounds.measured,
            _ratio(bounds.realized, ".3f"), _ratio(bounds.overstatement, ".2f")]


def _bounds_table(cells: list[CellReport]) -> Table:
    table = Table("bounds", "Compute bounds per role",
                  ["cell", "role", "episodes", "no-cache ceiling", "perfect-cache floor",
                   "measured", "realized share", "ceiling / floor"])
    for report in cells:
        total = ComputeBounds()
        count = 0
        for role in ROLES:
            records = [r for s in report.steps if (r := s.episode(role)) is not None]
            bounds = cell_bounds(records)
            total, count = total + bounds, count + len(records)
            table.rows.append(_bounds_row(report.cell.key, role, len(records), bounds))
        table.rows.append(_bounds_row(report.cell.key, "all", count, total))
    return table


def _growth_table(cells: list[CellReport]) -> Table:
    table = Table("growth", "Store growth and audits",
                  ["cell", "chain", "tasks", "files (25/50/75/100 %)", "bytes at end",
                   "schema findings", "gate findings", "gate refusals"])
    for report in cells:
        for name, steps in report.chains.items():
            if not steps:
                continue
            marks = [steps[max(0, round(len(steps) * q) - 1)].store_files
                     for q in (0.25, 0.5, 0.75, 1.0)]
            refusals = sum(len(s.gate_refusals) for s in steps)
            table.rows.append([report.cell.key, name, len(steps), "/".join(map(str, marks)),
                               steps[-1].store_bytes, steps[-1].schema_findings,
                               steps[-1].gate_findings, refusals])
    return table


def _entry_kinds(store: Store) -> tuple[int, int]:
    """How many entries of ``store`` declare ``type: skill`` and ``type: note``."""
    skills = notes = 0
    for path in store.files():
        parsed = parse_file(store.read(path), path.rsplit("/", 1)[-1].removesuffix(".md"))
        metadata = parsed.frontmatter.metadata if parsed.frontmatter else None
        kind = (metadata or {}).get("type")
        skills, notes = skills + (kind == "skill"), notes + (kind == "note")
    return skills, notes


def _per_episode(total: int, episodes: int) -> Value:
    return round(total / episodes, 2) if episodes else MISSING


def _library_table(cells: list[CellReport], run_dir: Path) -> Table:
    """The paper's Table 8: each chain's final library and what curating it took."""
    table = Table("library", "Final library per chain", [
        "cell", "chain", "tasks", "files", "folders", "sections", "KB", "skills", "notes",
        "curation tool calls", "per episode", "curation rounds per episode"])
    for report in cells:
        for name, steps in report.chains.items():
            folder = run_dir / report.cell.key / name / "store"
            if not steps or not folder.is_dir():
                continue
            store = Store(folder)
            shape = measure_store(store).shape
            skills, notes = _entry_kinds(store)
            curations = [s.curation for s in steps if s.curation is not None]
            calls = sum(e.tool_call_count for e in curations)
            rounds = sum(e.rounds for e in curations)
            table.rows.append([
                report.cell.key, name, len(steps), shape.files, shape.folders, shape.sections,
                round(shape.bytes / 1024, 1), skills, notes, calls,
                _per_episode(calls, len(curations)), _per_episode(rounds, len(curations))])
    return table


def _body(table: Table) -> str:
    return table.grid() if table.rows else table.empty


def _notes(table: Table) -> list[str]:
    return [*(f"- {note}" for note in table.notes), ""]


def _execution(report: CellReport) -> list[StepRecord]:
    return [s for s in report.steps if s.execution is not None]


def _execution_table(cells: list[CellReport]) -> Table:
    """The paper's Table 17: the execution agent's rounds and token categories per task."""
    table = Table("execution", "Execution agent per task (means)",
                  ["cell", "tasks", "success", "rounds", "uncached input", "cached input",
                   "cache write", "output", "reasoning"],
                  empty="(no cell with a model execution agent)")
    for report in cells:
        steps = _execution(report)
        if not steps:
            continue
        n = len(steps)
        usage = sum((s.usage("execution") for s in steps), Usage())
        table.rows.append([report.cell.key, n, f"{sum(s.success for s in steps)} / {n}",
                           sum(s.rounds("execution") for s in steps) / n,
                           usage.uncached_input / n, usage.cached_input / n,
                           usage.cache_write / n, usage.output / n, usage.reasoning / n])
    return table


def _compute_table(cells: list[CellReport]) -> Table:
    """The paper's Table 18: the execution agent's compute bounds per task."""
    table = Table("compute", "Execution agent compute per task (tokens, means)",
                  ["cell", "tasks", "first-turn context", "unique prefill", "decode",
                   "floor", "measured", "no-cache ceiling", "measured / floor",
                   "ceiling / floor", "realized share"],
                  empty="(no cell with a model execution agent)")
    for report in cells:
        records = [r for s in _execution(report) if (r := s.execution) is not None]
        if not records:
            continue
        n = len(records)
        total = cell_bounds(records)
        ratio = total.measured / total.floor if total.floor else None
        table.rows.append([report.cell.key, n, total.first_context / n,
                           total.unique_prefill / n, total.decode / n, total.floor / n,
                           total.measured / n, total.ceiling / n, _ratio(ratio, ".2f"),
                           _ratio(total.overstatement, ".1f"), _ratio(total.realized, ".3f")])
    return table


_CSV_FIELDS = ["cell", "chain", "position", "task_id", "family", "success", "steps_used",
               "execution_rounds", "guidance_chars", "served_files", "gate_refusals",
               "store_files", "store_bytes", "schema_findings", "gate_findings",
               "reset_seconds", "episode_seconds", "memory_seconds"]
_TOKENS = ["uncached_input", "cached_input", "cache_write", "output", "reasoning"]
_BOUNDS = ["ceiling", "floor", "measured"]


def _task_row(cell: str, chain: str, s: StepRecord) -> list[Value]:
    row: list[Value] = [
        cell, chain, s.position, s.task_id, s.family, int(s.success), s.steps_used,
        s.rounds("execution"), s.guidance_chars, len(s.served_paths),
        len(s.gate_refusals), s.store_files, s.store_bytes, s.schema_findings,
        s.gate_findings, round(s.reset_seconds, 3), round(s.episode_seconds, 3),
        round(s.memory_seconds, 3)]
    for role in ROLES:
        usage = s.usage(role)
        row.extend(getattr(usage, kind) for kind in _TOKENS)
    for role in ROLES:
        record = s.episode(role)
        bounds = episode_bounds(record) if record is not None else ComputeBounds()
        row.extend(getattr(bounds, kind) for kind in _BOUNDS)
    return row


def _tasks_table(cells: list[CellReport]) -> Table:
    """One row per task: outcome, rounds, each role's tokens and bounds, the store after it."""
    table = Table("tasks", "Tasks", [
        *_CSV_FIELDS, *(f"{role}_{kind}" for role in ROLES for kind in _TOKENS),
        *(f"{role}_{kind}" for role in ROLES for kind in _BOUNDS)])
    for report in cells:
        for chain, steps in report.chains.items():
            table.rows.extend(_task_row(report.cell.key, chain, s) for s in steps)
    return table


def _figures_part(cells: list[CellReport], run_dir: Path) -> list[str]:
    from memdir.skills._figures import write_figures

    figures = write_figures(cells, run_dir)
    lines = ["## Figures", ""]
    lines += [f"- `{path.name}`" for path in figures.written]
    lines += [f"- `{name}`: not drawn ({why})" for name, why in figures.skipped.items()]
    return [*lines, ""]


def build_report(run_dir: Path, prices: PriceTable | None = None) -> tuple[Path, Path]:
    """Write ``report.md``, ``tasks.csv`` and the figures into ``run_dir``.

    Returns:
        The paths of ``report.md`` and ``tasks.csv``.
    """
    cells = load_run(run_dir)
    prices = prices or PriceTable.load()
    parts = [f"# Skill-setting report: {run_dir.name}", "",
             "Built from the step records only. Costs use the price table; "
             f"'{MISSING}' means a model has no price (or, per solved task, nothing was "
             "solved).", "",
             "## Success per variant and execution tier (paper Table 5)", "",
             _body(table5(cells, prices)), "", *_notes(table5(cells, prices)),
             "## Success per goal family (paper Table 15)", "",
             _body(table15(cells)), "", *_notes(table15(cells)),
             "## Cost by role (paper Table 16)", "",
             _body(table16(cells, prices)), "", *_notes(table16(cells, prices)),
             "## Compute bounds per role (tokens; docs/costs.md)", "",
             "Ceiling: every call prefills its whole context again. Floor: each unique "
             "context token prefilled once, plus decode. Measured: what was prefilled "
             "(cache reads excluded), plus decode. Realized share: (ceiling - measured) / "
             f"(ceiling - floor); '{MISSING}' when nothing could be saved.", "",
             _bounds_table(cells).grid(), "",
             "## Execution agent per task (paper Table 17)", "",
             "Means over the cell's tasks played by a model (a three-chain cell pools its "
             "chains): rounds and token categories of the execution agent.", "",
             _body(_execution_table(cells)), "",
             "## Execution agent compute per task (paper Table 18)", "",
             "First-turn context: the first call's input. Unique prefill: context tokens "
             "no earlier call of the episode held. Floor: unique prefill plus decode. "
             "Measured / floor: how far the prefill actually paid stays above the floor.",
             "", _body(_compute_table(cells)), "",
             "## Final library per chain (paper Table 8)", "",
             "Each chain's store as its last task left it: shape as memdir health measures "
             "it, entries by their declared type, and the curator's effort over the chain "
             f"('{MISSING}' where no curator ran).", "",
             _body(_library_table(cells, run_dir)), "",
             "## Store growth and audits (files after 25/50/75/100 % of each chain)", "",
             _growth_table(cells).grid(), "",
             *_figures_part(cells, run_dir),
             "Per-task rounds and token categories: tasks.csv.", ""]
    report = run_dir / "report.md"
    table = run_dir / "tasks.csv"
    report.write_text("\n".join(parts), encoding="utf-8")
    table.write_text(_tasks_table(cells).csv(), encoding="utf-8")
    return report, table
