"""``memdir study``: run a study config into a run folder, and report on a run.

``memdir.study`` (and with it inspect_ai) is imported only when a command runs.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from memdir.cli._common import (
    ExitCode,
    console,
    err_console,
    errors_as_json,
    fail,
    inspect_view_command,
    print_json,
    runnable,
    show_model_retries,
)
from memdir.cli._rejudge import rejudge_command

if TYPE_CHECKING:
    from memdir.study import StudyConfig

__all__ = ["inspect_command", "register", "report_command", "run_command"]

study_app = typer.Typer(
    name="study",
    help="Run the conversational study from a YAML config, and report on its records.",
    no_args_is_help=True,
)


def _counts_line(config: StudyConfig, cells: int, table: int) -> str:
    """The cell count beside the paper's, counted as the paper counts (tiers pooled)."""
    line = f"cells: memdir {cells}, {table} per test set (a tier's conversations pooled)"
    paper = config.paper
    if paper is None:
        return f"{line}; the config states no paper count"
    verdict = "agree" if paper.cells == table else "differ"
    why = f" ({paper.note})" if paper.note and verdict == "differ" else ""
    return f"{line}; paper {paper.cells} ({paper.table}): {verdict}{why}"


def _dry_run(config: StudyConfig, data: Path | None, as_json: bool) -> None:
    """List the cells, their estimated cost and the paper's count; then check the data.

    A data problem is reported last, with the message and hint the real run gives.
    """
    from memdir.study import DataError, check_data, resolve_data_dir, table_cells
    from memdir.study._estimate import basis, estimate_cells

    problem: DataError | None = None
    folder: Path | None = None
    questions: dict[str, int] | None = None
    try:
        checked = check_data(config, resolve_data_dir(config, data))
        folder, questions = checked.folder, checked.questions
    except DataError as exc:
        problem = exc
    estimates = estimate_cells(config, questions)
    known = [e for e in estimates if e.low_cents is not None and e.high_cents is not None]
    low = sum(e.low_cents or 0.0 for e in known) / 100
    high = sum(e.high_cents or 0.0 for e in known) / 100
    cells = [e.cell for e in estimates]
    pooled = table_cells(cells)
    if as_json:
        paper = config.paper
        report: dict[str, object] = {
            "name": config.name,
            "cells": [{**e.cell.model_dump(mode="json"), "key": e.cell.key,
                       **e.model_dump(mode="json", exclude={"cell"})} for e in estimates],
            "estimate": {"low_dollars": round(low, 4), "high_dollars": round(high, 4),
                         "cells_estimated": len(known),
                         "cells_not_estimated": len(estimates) - len(known), "basis": basis()},
            "counts": {"memdir": len(cells), "per_test_set": pooled,
                       "paper": None if paper is None else paper.model_dump(mode="json"),
                       "agree": None if paper is None else paper.cells == pooled},
            "data": None if folder is None else str(folder),
        }
        if problem is not None:
            report |= {"error": str(problem), "hint": runnable(problem.hint),
                       "exit_code": int(ExitCode.ERROR)}
        print_json(report)
        if problem is not None:
            raise typer.Exit(ExitCode.ERROR)
        return
    console.print(f"[bold]{escape(config.name)}[/]: {len(estimates)} cells (dry run, no API call)")
    for e in estimates:
        c = e.cell
        cost = ("unknown" if e.low_cents is None or e.high_cents is None
                else f"{e.low_cents / 100:.2f}-{e.high_cents / 100:.2f} $")
        builder = f" built by {c.builder_model}" if c.builder_model else ""
        note = f"  ({e.note})" if e.note else ""
        console.print(escape(f"  {c.dataset_key} {c.conversation} {c.variant}{builder} | "
                             f"search {c.search_model} | {c.harness} | {e.questions} q "
                             f"({e.questions_from}) | {cost}{note}"))
    console.print(escape(f"estimated search cost: {low:.2f}-{high:.2f} $ over {len(known)} "
                         f"cells; {len(estimates) - len(known)} cells not estimated"))
    console.print(escape(f"basis: {basis()}"))
    console.print(escape(_counts_line(config, len(cells), pooled)))
    if problem is not None:
        fail(str(problem), problem.hint)
    console.print(escape(f"data: every file and conversation the cells read is in {folder}"))


def _resume_command(config_path: Path, folder: Path, data: Path | None) -> str:
    """The command that resumes this run, quoted for a shell (backticks for :func:`runnable`)."""
    words = ["memdir", "study", "run", str(config_path), "--out", str(folder)]
    if data is not None:
        words += ["--data", str(data)]
    return f"`{shlex.join(words)}`"


def run_command(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG",
                                                help="The study config (YAML).")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", metavar="RUN",
                                  help="Run folder (default: runs/<name>).")
    ] = None,
    data: Annotated[
        Path | None, typer.Option(
            "--data", metavar="DIR", help="The benchmark folder; before MEMDIR_DATA_DIR and "
            "the config's data: (a relative data: is read from the config file's folder).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the cells, estimate their cost, check the "
                           "data; run nothing.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: the dry run's cells, estimate, "
                           "counts and data folder, or the run's cell statuses.")
    ] = False,
) -> None:
    """Run every cell of a study config (an existing run folder is resumed).

    Every benchmark file is loaded and every conversation the config names is
    resolved before anything runs. Each store is built once and each cell runs as an
    inspect_ai eval (logs in OUT/logs, for 'inspect view'): every question without a
    record is answered, graded and written as one JSON record. Exit 0 when every
    cell completed, 1 when some failed (their reasons are printed; rerun to resume),
    2 when the config or the data is unusable, 130 when interrupted (Ctrl-C; the
    printed command resumes).
    """
    from memdir.study import ConfigError, load_config

    with errors_as_json(as_json):
        try:
            config = load_config(config_path)
            config.cells()
        except ConfigError as exc:
            fail(str(exc), "fix the config (see docs/study.md)")
        if dry_run:
            _dry_run(config, data, as_json)
        else:
            _run(config, config_path, out or Path("runs") / config.name, data, as_json)


def _run(config: StudyConfig, config_path: Path, folder: Path, data: Path | None,
         as_json: bool) -> None:
    """Run the study with a progress bar per cell; print each cell's status and what next."""
    from memdir.study import ConfigError, DataError, log_dir, run_study

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
            statuses = run_study(config, folder, progress=progress, data_dir=data)
        except DataError as exc:
            fail(str(exc), exc.hint)
        except (ConfigError, ValueError) as exc:
            fail(str(exc), "fix the config or choose another --out folder")
        except KeyboardInterrupt:
            bar.stop()
            fail(f"interrupted: the answered questions' records are kept in {folder}",
                 f"resume with {_resume_command(config_path, folder, data)}",
                 ExitCode.INTERRUPTED)
    failed = [s for s in statuses if s.status != "complete"]
    report = runnable(f"`{shlex.join(['memdir', 'study', 'report', str(folder)])}`")
    resume = runnable(_resume_command(config_path, folder, data))
    transcripts = f"`{inspect_view_command(log_dir(folder))}`"
    if as_json:
        print_json({"run": str(folder),
                    "cells": [{"key": s.cell.key, "status": s.status, "answered": s.answered,
                               "questions": s.questions, "reason": s.reason} for s in statuses],
                    "report": report.strip("`"), "transcripts": transcripts.strip("`"),
                    "resume": resume.strip("`") if failed else None})
    else:
        for s in statuses:
            mark = "ok" if s.status == "complete" else "FAILED"
            reason = f": {s.reason}" if s.reason else ""
            console.print(escape(f"{mark:6} {s.cell.key} {s.answered}/{s.questions}{reason}"))
        console.print(escape(f"run folder: {folder}; report with: {report}"))
        console.print(escape(f"transcripts: {transcripts}"))
        if failed:
            console.print(escape(f"resume the failed cells with: {resume}"))
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
    console.print(escape(f"read the transcripts with: `{inspect_view_command(log_dir(run))}`"))


def register(app: typer.Typer) -> None:
    """Add ``study run``, ``study report`` and ``study inspect`` to the command line."""
    study_app.command("run")(run_command)
    study_app.command("report")(report_command)
    study_app.command("inspect")(inspect_command)
    study_app.command("rejudge")(rejudge_command)
    app.add_typer(study_app)
