"""``memdir skills run CONFIG`` / ``memdir skills report RUN``: the skill setting's grid.

``run`` plays every cell of a run config (resuming what is recorded);
``--dry-run`` lists the cells and the models they would call without running
anything; a run pins its inputs in ``manifest.json`` (:func:`memdir.skills.pin_run`).
``report`` writes ``report.md`` and ``tasks.csv`` from a run's records.
memdir.skills (and through it inspect_ai) is imported only when a command runs.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memdir.cli._common import ExitCode, console, fail, inspect_view_command, runnable

if TYPE_CHECKING:
    from memdir.skills import AlfworldTask, Cell, RunConfig

__all__ = ["register"]

skills_app = typer.Typer(
    help="Run the skill setting (ALFWorld chains with memory variants) and report on it.",
    no_args_is_help=True,
)

def _dry_run(config: RunConfig, cells: list[Cell], split: Path | None) -> None:
    """List the cells beside the paper's count; ``split`` None: the data check failed."""
    from rich.markup import escape

    paper = config.paper
    against = (f"; the paper: {paper.cells} ({paper.table})" if paper is not None else "")
    console.print(escape(f"{config.name}: {len(cells)} cell(s){against}, "
                         f"output {config.output}"))
    if paper is not None and paper.note:
        console.print(escape(f"  paper count: {paper.note}"))
    for cell in cells:
        console.print(escape(
            f"- {cell.key}  (protocol {cell.protocol}, variant {cell.variant}, "
            f"curator {cell.curator or '-'}, retriever {cell.retriever or '-'}, "
            f"execution {cell.execution})"))
    console.print(escape(f"models called: {', '.join(config.models()) or 'none (offline)'}"))
    if split is None:
        console.print("dry run: nothing was run, and the data check failed:")
        return
    console.print(escape(f"data: {split}"))
    console.print("dry run: nothing was run")


def _tasks(config: RunConfig, split: Path) -> list[AlfworldTask]:
    from memdir.skills import SPLIT, chains_for, list_tasks

    if not split.is_dir():
        fail(f"no ALFWorld split at {split}",
             f"pass --data DIR or set MEMDIR_DATA_DIR to the folder holding {SPLIT.as_posix()}")
    tasks = list_tasks(split)
    if not tasks:
        fail(f"{split} holds no ALFWorld game (no */*/game.tw-pddl)",
             "point --data at the benchmark folder holding alfworld/valid_seen")
    try:
        for protocol in config.protocols:
            chains_for(protocol, tasks, config.seed, config.limit, config.task_ids)
    except ValueError as exc:
        fail(str(exc), "fix task_ids in the config; task ids are <task folder>/<trial folder>")
    return tasks


@skills_app.command("run")
def run(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="A run config (YAML).")],
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="List the cells and check the data; run nothing.")] = False,
    cell_ids: Annotated[list[str] | None, typer.Option(
        "--cell", help="Run only this cell (its key; repeatable).")] = None,
    data: Annotated[Path | None, typer.Option(
        "--data", metavar="DIR", help="The benchmark folder holding alfworld/valid_seen "
        "(default: MEMDIR_DATA_DIR, else the config's data).")] = None,
    show_progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="A line per finished task on stderr: task n/N of "
        "the chain, time elapsed, an estimate of the time left (default: only in a "
        "terminal).")] = None,
) -> None:
    """Run the cells of a skill-setting config, resuming any that are partly recorded."""
    from rich.markup import escape

    from memdir.config import SettingsError, get_settings
    from memdir.progress import reporting
    from memdir.runs import EvalFailed
    from memdir.skills import AlfworldEnv, alfworld_missing, load_config, log_dir, pin_run, run_cell

    try:
        config = load_config(config_path)
    except ValueError as exc:
        fail(str(exc), "fix the config; see configs/skills-three-chain.yaml for an example")
    cells = [c for c in config.cells() if not cell_ids or c.key in cell_ids]
    if cell_ids and len(cells) != len(set(cell_ids)):
        fail(f"unknown cell key among {', '.join(cell_ids)}",
             f"list the cells with: `memdir skills run {config_path} --dry-run`")
    try:
        split = config.split(data or get_settings().data_dir)
    except SettingsError as exc:
        fail(str(exc), "fix or unset the variable")
    except ValueError as exc:
        if dry_run:
            _dry_run(config, cells, None)
        fail(str(exc), f"run `memdir skills run {config_path} --data DIR`, DIR being the "
             "benchmark folder")
    tasks = _tasks(config, split)
    if dry_run:
        _dry_run(config, cells, split)
        return
    missing = alfworld_missing()
    if missing is not None:
        fail(missing, "install alfworld (see docs/skills.md)")
    pin_run(config, tasks)
    env = AlfworldEnv(max_steps=config.max_steps, cache_dir=config.cache_dir, facts=True)

    async def play() -> None:
        for cell in cells:
            console.print(escape(f"running {cell.key}"))
            await run_cell(config, cell, tasks, env)

    again = _again(config_path, cell_ids, data)
    try:
        with reporting(enabled=show_progress):
            asyncio.run(play())
    except EvalFailed as exc:
        fail(str(exc), f"fix the cause and resume with: `{again}`")
    except KeyboardInterrupt:
        fail(f"interrupted: what was played is recorded in {config.output}",
             f"resume with `{again}`", ExitCode.INTERRUPTED)
    console.print(runnable(f"done; report with: `memdir skills report {config.output}`"),
                  markup=False, highlight=False)
    console.print(f"transcripts: `{inspect_view_command(log_dir(config.output))}`",
                  markup=False, highlight=False)


def _again(config_path: Path, cell_ids: list[str] | None, data: Path | None) -> str:
    """The command that resumes this run, quoted for a POSIX shell."""
    words = ["memdir", "skills", "run", str(config_path)]
    for key in cell_ids or []:
        words += ["--cell", key]
    if data is not None:
        words += ["--data", str(data)]
    return shlex.join(words)


@skills_app.command("report")
def report(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A run's output folder.")],
    prices: Annotated[Path | None, typer.Option(help="A price file merged over the table.")]
    = None,
) -> None:
    """Write report.md and tasks.csv into a run's folder from its records."""
    from memdir.agents import PriceTable
    from memdir.skills import build_report

    try:
        md, table = build_report(run_dir, PriceTable.load(prices))
    except ValueError as exc:
        fail(str(exc))
    console.print(f"wrote {md} and {table}")


def register(app: typer.Typer) -> None:
    """Add ``memdir skills`` to the command line."""
    app.add_typer(skills_app, name="skills")
