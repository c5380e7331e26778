"""``memdir study rejudge``: grade a finished run again and show how far the grades moved.

Registered under ``memdir study`` by :mod:`memdir.cli.study`; ``memdir.study``
(and with it inspect_ai) is imported only when the command runs.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from memdir.cli._common import ExitCode, console, err_console, fail, runnable, show_model_retries

__all__ = ["rejudge_command"]


def _resume_line(run: Path, judge: str | None, name: str | None) -> str:
    parts = ["memdir", "study", "rejudge", str(run)]
    if judge:
        parts += ["--judge", judge]
    if name:
        parts += ["--out", name]
    return "`" + shlex.join(parts) + "`"


def rejudge_command(
    run: Annotated[Path, typer.Argument(help="A run folder written by 'memdir study run'.")],
    judge: Annotated[str | None, typer.Option(
        "--judge", help="The judge, as provider/model (default: the run config's judge).")
    ] = None,
    out: Annotated[str | None, typer.Option(
        "--out", "-o", help="Name of the second record set under RUN/rejudge/ (default: "
        "rejudge-<judge model>); an existing set of that name is resumed.")] = None,
) -> None:
    """Grade every judged question of a finished run again, into a second record set.

    The first records are never touched: the second judging goes to
    RUN/rejudge/NAME/ (a run folder of its own, so 'memdir study report' reads
    it), one record per question written as soon as it is graded, so a stopped
    re-judging resumes when the same command runs again. The judge runs with the
    run's judge settings and the same retries and time limits as the first
    judging. Then prints, per cell, judge correctness first and second, the
    difference in points and how many questions flipped each way, and the mean
    absolute movement (written to RUN/rejudge/NAME/movement.md and .csv).

    Exit 0 when every question is graded, 1 when the judge failed part-way (the
    graded questions are kept; rerun to resume), 2 when the run or the judge is
    unusable, 130 when interrupted (Ctrl-C; rerun to resume).
    """
    from memdir.study._rejudge import (
        RejudgeFailed,
        default_rejudge_name,
        movement_table,
        rejudge_run,
        write_movement,
    )

    resume = _resume_line(run, judge, out)
    show_model_retries()
    with Progress(TextColumn("re-judging"), BarColumn(), MofNCompleteColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task("rejudge", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            result = rejudge_run(run, judge_model=judge, name=out, progress=progress)
        except FileNotFoundError as exc:
            fail(str(exc), "pass a folder written by 'memdir study run' whose stores are kept")
        except RejudgeFailed as exc:
            fail(str(exc), f"rerun {resume} to resume", code=ExitCode.FINDINGS)
        except ValueError as exc:
            fail(str(exc), "check the run folder, the --judge model name and its API key")
        except KeyboardInterrupt:
            err_console.print(escape(runnable(
                f"interrupted: the graded questions are kept; run {resume} to resume")))
            raise typer.Exit(ExitCode.INTERRUPTED) from None
    table = movement_table(result)
    typer.echo(table.markdown())
    for path in write_movement(result):
        err_console.print(escape(f"wrote {path}"))
    name = out or default_rejudge_name(result.judge.model)
    console.print(escape(runnable(
        f"second record set: {result.folder} ({result.graded} graded now, {result.total} in "
        f"all); report it with `memdir study report {run / 'rejudge' / name}`")))
