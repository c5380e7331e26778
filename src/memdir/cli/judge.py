"""``memdir judge calibrate``: check a judge model against hand-labelled answers first.

The labelled set ships with memdir (answers to LoCoMo questions outside the held-out
test conversation, labelled by its authors); questions and golds are read from your
``locomo10.json``. The command grades every item with the judge exactly as a study
would and prints agreement, Cohen's kappa and each disagreement. memdir.bench's
judge (and through it inspect_ai) is imported only when the command runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from memdir.cli._common import console, fail
from memdir.config import get_settings

__all__ = ["register"]

judge_app = typer.Typer(help="Check the LLM judge before it grades a study.",
                        no_args_is_help=True)


@judge_app.command("calibrate")
def calibrate_command(
    model: Annotated[str, typer.Option("--model", "-m", help="The judge, as provider/model.")],
    data: Annotated[Path | None, typer.Option(
        "--data", help="The benchmark folder (default: MEMDIR_DATA_DIR); LoCoMo is read "
        "from locomo/locomo10.json in it.")] = None,
    effort: Annotated[str | None, typer.Option(
        "--effort", help="Reasoning effort, as the study config's judge.effort.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Grade the shipped labelled answers with a judge and report how well it agrees.

    Exit status: 0 done (whatever the agreement), 2 could not run (no data, bad
    model name, a model error that survived retries).

    For example:

        memdir judge calibrate --model openai/gpt-5.4-mini --data ../shared/data
    """
    from memdir.agents import AgentError, resolve_model
    from memdir.bench import DatasetError, load_locomo
    from memdir.bench.calibration import calibrate
    from memdir.bench.judge import judge_role

    folder = data or get_settings().data_dir
    if folder is None:
        fail("no benchmark folder.", "pass --data DIR or set MEMDIR_DATA_DIR to the folder "
             "that holds locomo/locomo10.json")
    try:
        dataset = load_locomo(Path(folder) / "locomo" / "locomo10.json")
        role = judge_role(reasoning_effort=effort) if effort else judge_role()
        report = asyncio.run(calibrate(resolve_model(model), dataset, role=role))
    except (DatasetError, KeyError) as exc:
        fail(str(exc).strip("'\""), "point --data at the folder holding locomo/locomo10.json")
    except (AgentError, ValueError) as exc:
        fail(str(exc), "check the model name and its API key")
    if as_json:
        typer.echo(json.dumps({**report.model_dump(mode="json"),
                               "agreement": report.agreement}, indent=1))
        return
    console.print(f"judge {report.model}: {report.agreed} of {report.items} labelled answers "
                  f"graded as labelled ({100 * report.agreement:.1f} %), Cohen's kappa "
                  + ("undefined" if report.kappa is None else f"{report.kappa:.2f}"))
    console.print(f"  labelled 1 -> judged 1: {report.true_positive}, judged 0: "
                  f"{report.false_negative}; labelled 0 -> judged 0: {report.true_negative}, "
                  f"judged 1: {report.false_positive}; unparseable replies: "
                  f"{report.judge_errors}")
    for d in report.disagreements:
        judged = "no grade" if d.judged is None else f"judged {d.judged}"
        console.print(f"- {d.question_id} (label {d.label}, {judged}): {d.answer}  [{d.reason}]",
                      markup=False)


def register(app: typer.Typer) -> None:
    """Add ``memdir judge`` to the command line."""
    app.add_typer(judge_app, name="judge")
