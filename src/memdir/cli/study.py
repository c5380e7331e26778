"""``memdir study``: run a study config into a run folder, and report on a run.

``memdir.study`` (and with it inspect_ai) is imported only when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from memdir.cli._common import ExitCode, console, err_console, fail, show_model_retries
from memdir.cli._rejudge import rejudge_command

if TYPE_CHECKING:
    from memdir.study import StudyConfig

__all__ = ["inspect_command", "register", "report_command", "run_command"]

_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""

study_app = typer.Typer(
    name="study",
    help="Run the conversational study from a YAML config, and report on its records.",
    no_args_is_help=True,
)


def _dry_run(config: StudyConfig) -> None:
    from memdir.study import resolve_data_dir
    from memdir.study._estimate import BASIS, estimate_cells

    try:
        data_dir: Path | None = resolve_data_dir(config)
    except ValueError:
        data_dir = None
    estimates = estimate_cells(config, data_dir)
    console.print(f"[bold]{escape(config.name)}[/]: {len(estimates)} cells (dry run, no API call)")
    low = high = 0.0
    unknown = 0
    for e in estimates:
        c = e.cell
        cost = ("unknown" if e.low_cents is None or e.high_cents is None
                else f"{e.low_cents / 100:.2f}-{e.high_cents / 100:.2f} $")
        if e.low_cents is None or e.high_cents is None:
            unknown += 1
        else:
            low, high = low + e.low_cents, high + e.high_cents
        builder = f" built by {c.builder_model}" if c.builder_model else ""
        note = f"  ({e.note})" if e.note else ""
        console.print(escape(f"  {c.dataset_key} {c.conversation} {c.variant}{builder} | "
                             f"search {c.search_model} | {c.harness} | {e.questions} q "
                             f"({e.questions_from}) | {cost}{note}"))
    console.print(escape(f"estimated search cost: {low / 100:.2f}-{high / 100:.2f} $ "
                         f"over {len(estimates) - unknown} cells; {unknown} cells not estimated"))
    console.print(escape(f"basis: {BASIS}"))


def run_command(
    config_path: Annotated[Path, typer.Argument(help="The study config (YAML).")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Run folder (default: runs/<name>).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the cells and estimate their cost; run nothing.")
    ] = False,
) -> None:
    """Run every cell of a study config (an existing run folder is resumed).

    Each store is built once and each cell runs as an inspect_ai eval (logs in
    OUT/logs, for 'inspect view'): every question without a record is answered,
    graded and written as one JSON record. Exit 0 when every cell completed, 1 when
    some failed (their reasons are printed; rerun to resume), 2 when the config is
    unusable, 130 when interrupted (Ctrl-C; rerun to resume).
    """
    from memdir.study import ConfigError, load_config, log_dir, run_study

    try:
        config = load_config(config_path)
        config.cells()
    except ConfigError as exc:
        fail(str(exc), "fix the config (see docs/study.md)")
    if dry_run:
        _dry_run(config)
        return
    folder = out or Path("runs") / config.name
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err_console) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(cell: object, done: int, total: int) -> None:
            key = getattr(cell, "key", str(cell))
            if key not in tasks:
                tasks[key] = bar.add_task(key, total=total)
            bar.update(tasks[key], completed=done)

        show_model_retries()
        try:
            statuses = run_study(config, folder, progress=progress)
        except (ConfigError, ValueError) as exc:
            fail(str(exc), "fix the config or choose another --out folder")
        except KeyboardInterrupt:
            err_console.print(escape(f"interrupted: the answered questions' records are kept "
                                     f"in {folder}; run the same command again to resume"))
            raise typer.Exit(_INTERRUPTED) from None
    failed = [s for s in statuses if s.status != "complete"]
    for s in statuses:
        mark = "ok" if s.status == "complete" else "FAILED"
        reason = f": {s.reason}" if s.reason else ""
        console.print(escape(f"{mark:6} {s.cell.key} {s.answered}/{s.questions}{reason}"))
    console.print(escape(f"run folder: {folder}; report with: memdir study report {folder}"))
    console.print(escape(f"transcripts: inspect view --log-dir {log_dir(folder)}"))
    if failed:
        raise typer.Exit(ExitCode.FINDINGS)


def report_command(
    run: Annotated[Path, typer.Argument(help="A run folder written by 'memdir study run'.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="md or csv.")] = "md",
) -> None:
    """Report a run from its records (never re-runs anything).

    Prints the markdown tables and writes them under RUN/report/ (report.md, or
    one CSV per table with --format csv).
    """
    from memdir.study import write_report

    try:
        text, written = write_report(run, fmt)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc), "pass a folder written by 'memdir study run' and --format md or csv")
    if fmt == "md":
        typer.echo(text)
    for path in written:
        err_console.print(escape(f"wrote {path}"))


def inspect_command(
    run: Annotated[Path, typer.Argument(help="A run folder written by 'memdir study run'.")],
) -> None:
    """Show where a run's transcripts are and how to open them in 'inspect view'.

    'memdir study run' runs every cell as an inspect_ai eval and writes its logs
    under RUN/logs (one per cell and attempt); nothing is re-run here. Lists each
    cell's eval logs, then prints the 'inspect view' command.
    """
    import json

    from memdir.study import load_run, log_dir

    try:
        records = load_run(run)
    except FileNotFoundError as exc:
        fail(str(exc), "pass a folder written by 'memdir study run'")
    for status in records.statuses:
        evals_path = run / "cells" / status.cell.key / "evals.json"
        evals = json.loads(evals_path.read_text("utf-8")) if evals_path.exists() else []
        console.print(escape(f"{status.status:8} {status.cell.key} "
                             f"{status.answered}/{status.questions}"))
        for attempt in evals:
            console.print(escape(f"  {attempt['status']:9} {attempt['samples']:4} samples "
                                 f"{run / attempt['log']}"))
    console.print(escape(f"read the transcripts with: inspect view --log-dir {log_dir(run)}"))


def register(app: typer.Typer) -> None:
    """Add ``study run``, ``study report`` and ``study inspect`` to the command line."""
    study_app.command("run")(run_command)
    study_app.command("report")(report_command)
    study_app.command("inspect")(inspect_command)
    study_app.command("rejudge")(rejudge_command)
    app.add_typer(study_app)
