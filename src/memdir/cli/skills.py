"""``memdir skills run CONFIG`` / ``memdir skills report RUN``: the skill setting's grid.

``run`` plays every cell of a run config (resuming what is recorded);
``--dry-run`` lists the cells and the models they would call without running
anything; a run pins its inputs in ``manifest.json`` (:func:`memdir.skills.pin_run`).
``report`` writes ``report.md`` and ``tasks.csv`` from a run's records.
memdir.skills (and through it inspect_ai) is imported only when a command runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from memdir.cli._common import console, fail

__all__ = ["register"]

skills_app = typer.Typer(
    help="Run the skill setting (ALFWorld chains with memory variants) and report on it.",
    no_args_is_help=True,
)

@skills_app.command("run")
def run(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="A run config (YAML).")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the cells only.")] = False,
    cell_ids: Annotated[list[str] | None, typer.Option(
        "--cell", help="Run only this cell (its key; repeatable).")] = None,
) -> None:
    """Run the cells of a skill-setting config, resuming any that are partly recorded."""
    from memdir.runs import EvalFailed
    from memdir.skills import (
        AlfworldEnv,
        alfworld_missing,
        list_tasks,
        load_config,
        log_dir,
        pin_run,
        run_cell,
    )

    try:
        config = load_config(config_path)
    except ValueError as exc:
        fail(str(exc), "fix the config; see configs/skills-grid.yaml for an example")
    cells = [c for c in config.cells() if not cell_ids or c.key in cell_ids]
    if cell_ids and len(cells) != len(set(cell_ids)):
        fail(f"unknown cell key among {', '.join(cell_ids)}",
             f"list the cells with: memdir skills run {config_path} --dry-run")
    if dry_run:
        console.print(f"{config.name}: {len(cells)} cell(s), output {config.output}")
        for cell in cells:
            console.print(f"- {cell.key}  (protocol {cell.protocol}, variant {cell.variant}, "
                          f"curator {cell.curator or '-'}, retriever {cell.retriever or '-'}, "
                          f"execution {cell.execution})")
        console.print(f"models called: {', '.join(config.models()) or 'none (offline)'}")
        console.print("dry run: nothing was run")
        return
    missing = alfworld_missing()
    if missing is not None:
        fail(missing, "install alfworld (see docs/skills.md)")
    if not config.data.is_dir():
        fail(f"no ALFWorld split at {config.data}", "point 'data' at the valid_seen folder")
    tasks = list_tasks(config.data)
    pin_run(config, tasks)
    env = AlfworldEnv(max_steps=config.max_steps, cache_dir=config.cache_dir, facts=True)

    async def play() -> None:
        for cell in cells:
            console.print(f"running {cell.key}")
            await run_cell(config, cell, tasks, env)

    try:
        asyncio.run(play())
    except EvalFailed as exc:
        fail(str(exc), f"fix the cause and rerun: memdir skills run {config_path}")
    except KeyboardInterrupt:
        console.print(f"interrupted: what was played is recorded in {config.output}; "
                      "run the same command again to resume")
        raise typer.Exit(130) from None
    console.print(f"done; report with: memdir skills report {config.output}")
    console.print(f"transcripts: inspect view --log-dir {log_dir(config.output)}")


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
