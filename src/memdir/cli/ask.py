"""``memdir ask``: answer a question from a store with the search agent.

``--variant`` takes the study's variant names (:data:`memdir.builders.VARIANTS`);
the variant catalog picks the search prompt family and whether a store is read.
``memdir.agents`` (and with it inspect_ai) is imported only when the command
runs, so other subcommands start fast.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from memdir.builders import CATALOG, VARIANTS, variant_hint
from memdir.cli._common import (
    ExitCode,
    StoreArg,
    console,
    err_console,
    errors_as_json,
    fail,
    open_store,
    show_model_retries,
)
from memdir.config import get_settings

if TYPE_CHECKING:
    from memdir.agents import Answer

__all__ = ["OFFLINE_MODEL", "ask_command", "format_cost", "register"]

# The same name as memdir.agents.OFFLINE_MODEL (a test keeps them equal).
OFFLINE_MODEL = "memdir/grep-reader"


def format_cost(cost: float | None, model: str, usage_known: bool = True) -> str:
    """A cost for people: dollars, or why it is unknown."""
    if cost is None and not usage_known:
        return "unknown (the provider reported no token usage)"
    if cost is None:
        return f"unknown (no price for {model}; add one with --prices FILE)"
    return f"${cost:.4f}"


CITED_LINES_EXIST = ("found = the cited file has those lines; whether they answer the "
                     "question is not checked")
"""What the mark after a citation means, printed under the citations."""


def print_answer(answer: Answer, *, note: bool = True) -> None:
    """Show an answer: the text, each citation checked, then rounds, tokens and cost.

    Args:
        answer: The answer to show.
        note: Say on stderr when the offline baseline answered (the demo says it once).
    """
    if answer.zero_cost_baseline and note:
        err_console.print(
            "[yellow]note:[/] answered by the offline grep-reader, a deterministic zero-cost "
            "baseline that uses no LLM. Set --model or MEMDIR_MODEL for a real search agent."
        )
    console.print(escape(answer.text))
    if answer.citations:
        console.print()
        for c in answer.citations:
            problem = escape(c.problem or "")
            mark = "[green]found[/]" if c.resolved else f"[red]not found[/] ({problem})"
            console.print(f"  {escape(c.raw)} {mark}")
        console.print(f"  [dim]({CITED_LINES_EXIST})[/]")
    rec = answer.records[0]
    u = answer.usage
    tokens = (f"tokens in {u.input:,} (cached {u.cached_input:,}), out {u.output:,} "
              f"(reasoning {u.reasoning:,})")
    if not u.known:
        tokens = f"tokens unknown for {u.unreported} call(s) that reported no usage"
    cost = format_cost(answer.cost, answer.model, u.known)
    err_console.print(
        f"[dim]{answer.model}: {rec.rounds} round(s), {rec.tool_call_count} tool call(s); "
        f"{tokens}; cost {escape(cost)}"
        + ("; budget exhausted, final answer forced" if rec.budget_exhausted else "") + "[/]"
    )


def ask_command(
    store_path: StoreArg,
    question: Annotated[str, typer.Argument(help="The question; options may follow inline.")],
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="provider/model (default: MEMDIR_MODEL; without "
                     f"one, the offline {OFFLINE_MODEL} baseline)."),
    ] = None,
    variant: Annotated[
        str, typer.Option("--variant", help="The memory variant the store is, which picks the "
                          f"search prompt and tools: {', '.join(VARIANTS)}.")
    ] = "curated",
    max_rounds: Annotated[
        int | None, typer.Option("--max-rounds", min=1, help="Tool-round budget (default 40).")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option("--prices", help="YAML price table merged over the defaults.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the answer, citations, usage and records as JSON.")
    ] = False,
) -> None:
    r"""Answer a question from the store, citing the files it read.

    The search agent surveys the store, greps, reads what it needs, and answers
    with citations such as [/memories/people/maya.md:L10-12]; each citation is
    checked against the store and marked found (the file has those lines) or not
    found; whether the lines answer the question is not checked. Without --model and
    without MEMDIR_MODEL the offline grep-reader answers instead: a deterministic
    baseline that calls no LLM and costs nothing, labelled as such.

    Exit status: 0 answered with every citation resolving, 1 answered but some
    citation does not resolve, 2 could not answer (no store, bad option, no API
    key or provider SDK, a model error that survived retries). Each retry of a
    model call is shown as one line; a call gives up after MEMDIR_ASK_TIMEOUT
    seconds (60 by default), waits included. With --json a failure is printed
    as a JSON object with "error" and "hint".

    For example:

        memdir ask ./memories "Where does Maya work now?"

        memdir ask ./memories "When was Ada's wedding?" -m openai/gpt-5.4-mini
    """
    with errors_as_json(as_json):
        answer = _answer(store_path, question, model, variant, max_rounds, prices)
    if as_json:
        data = answer.model_dump(mode="json")
        data["baseline_note"] = (
            "offline grep-reader: zero-cost baseline, no LLM" if answer.zero_cost_baseline
            else None
        )
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_answer(answer)
    if not answer.citations_resolve:
        raise typer.Exit(int(ExitCode.FINDINGS))


def _answer(store_path: Path, question: str, model: str | None, variant: str,
            max_rounds: int | None, prices: Path | None) -> Answer:
    if variant not in CATALOG:
        fail(f"unknown variant {variant!r}.", f"{variant_hint(variant)}.")
    spec = CATALOG[variant]
    from memdir.agents import (
        AgentError,
        ModelSetupError,
        PriceTable,
        ask,
        resolve_model,
        search_family_role,
    )

    store = open_store(store_path) if spec.needs_store else None
    chosen = model or get_settings().model or OFFLINE_MODEL
    family = spec.search_family
    show_model_retries()
    try:
        table = PriceTable.load(prices)
        llm = resolve_model(chosen, timeout=get_settings().ask_timeout)
        role = None if max_rounds is None else search_family_role(family, max_rounds=max_rounds)
        return asyncio.run(ask(store, question, llm, variant=family,  # type: ignore[arg-type]
                               role=role, prices=table))
    except ModelSetupError as exc:
        fail(str(exc), "set the key or install the SDK named above, or pick another --model.")
    except AgentError as exc:
        fail(str(exc), "check the model name and the provider's status, or try again later.")
    except ValueError as exc:
        fail(str(exc))


def register(app: typer.Typer) -> None:
    """Add ``ask`` to the command line."""
    app.command("ask")(ask_command)
