"""``memdir ingest``: fold a conversation into a store with the management agent.

``memdir.agents`` (and with it inspect_ai) is imported only when the command runs.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn

from memdir.cli._common import ExitCode, console, err_console, fail, show_model_retries
from memdir.cli.ask import format_cost
from memdir.config import get_settings
from memdir.store import Store, StoreError

if TYPE_CHECKING:
    from memdir.agents import ChunkOutcome

__all__ = ["ingest_command", "register"]


def ingest_command(
    store_path: Annotated[
        Path, typer.Argument(metavar="STORE", help="The store's folder (created if missing).")
    ],
    source: Annotated[Path, typer.Argument(metavar="SOURCE",
                                           help="Conversation: JSON turns file or plain text.")],
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="provider/model (default: MEMDIR_MODEL).")
    ] = None,
    chunk_tokens: Annotated[
        int, typer.Option("--chunk-tokens", min=200, help="Largest chunk; longer sessions split.")
    ] = 8000,
    locator: Annotated[
        str, typer.Option("--locator", help="Source locators: session ([S1T2]) or block ([B1M2]).")
    ] = "session",
    skip: Annotated[
        int, typer.Option("--skip", min=0, help="Chunks already integrated (resume a run).")
    ] = 0,
    prices: Annotated[
        Path | None, typer.Option("--prices", help="YAML price table merged over the defaults.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every chunk's record as JSON lines.")
    ] = False,
    sync: Annotated[
        bool, typer.Option("--sync", help="The store is a replica: sync it with its git remote "
                           "before the first chunk and after every chunk (see memdir sync).")
    ] = False,
) -> None:
    """Integrate a conversation into a store, one chunk at a time.

    One session is one chunk unless its turns are longer than --chunk-tokens;
    then it is split at turn boundaries into near-equal parts. The management
    agent surveys the store, files what is worth keeping with source locators
    such as [S3T5], reconciles changes, and tidies the tree. Each chunk is
    all-or-nothing: if it fails (a model error that survived retries), the store
    is restored to its state before the chunk and the command stops, telling you
    how to resume with --skip.

    The source is JSON {"speakers": [...], "sessions": [{"id", "date", "turns":
    [{"speaker", "text"}]}]} or plain text (one turn per line, "Name: text").

    With --sync the store is synced with its git remote before the first chunk
    and after each one, so other replicas see each chunk as it lands; commits
    name the model that wrote them. A chunk never syncs half done.

    Exit status: 0 every chunk integrated, 2 nothing or only part was integrated
    (bad source, no model, a failed chunk).

    For example:

        memdir ingest ./memories talk.json --model openai/gpt-5.4-mini
    """
    chosen = model or get_settings().model
    if chosen is None:
        fail("no model to run the management agent.",
             "pass --model provider/model (e.g. openai/gpt-5.4-mini) or set MEMDIR_MODEL; "
             "the offline grep-reader can only answer questions, not build stores.")
    from memdir.agents import is_policy

    if is_policy(chosen):
        fail(f"{chosen} is the offline search baseline and cannot build a store.",
             "pass a real model with --model.")
    if locator not in ("session", "block"):
        fail(f"unknown locator {locator!r}.", "choose session or block.")
    loc: Literal["session", "block"] = "session" if locator == "session" else "block"
    from memdir.agents import IngestError, ModelSetupError, PriceTable, ingest, resolve_model
    from memdir.conversation import chunk_conversation, load_conversation

    try:
        llm = resolve_model(chosen)
    except ModelSetupError as exc:
        fail(str(exc), "set the key or install the SDK named above, or pick another --model.")
    except ValueError as exc:
        fail(str(exc))
    try:
        conversation = load_conversation(source, locator=loc)
        table = PriceTable.load(prices)
        store = Store(store_path, create=True, max_file_bytes=get_settings().max_file_bytes)
    except (ValueError, StoreError, OSError) as exc:
        fail(str(exc))
    between = _between_chunks(store, f"ingest {chosen}", quiet=as_json) if sync else None
    total = len(chunk_conversation(conversation, chunk_tokens))
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} chunks"),
                  console=err_console, transient=True, disable=as_json) as bar:
        task = bar.add_task("integrating", total=total, completed=skip)
        integrated = [skip]

        def done(outcome: ChunkOutcome) -> None:
            integrated[0] = outcome.index
            bar.advance(task)
            if between is not None:
                between()
            rec = outcome.record
            if as_json:
                typer.echo(json.dumps({"chunk": outcome.index, "label": outcome.label,
                                       "cost": outcome.cost,
                                       "record": rec.model_dump(mode="json")}))
                return
            console.print(
                f"chunk {outcome.index}/{total} {escape(outcome.label)}: {rec.rounds} round(s), "
                f"{rec.tool_call_count} tool call(s), {rec.usage.input:,} tokens in, "
                f"{rec.usage.output:,} out, {format_cost(outcome.cost, rec.model, rec.usage.known)}"
                + (" [yellow](budget exhausted)[/]" if rec.budget_exhausted else "")
            )

        show_model_retries()
        try:
            result = asyncio.run(ingest(conversation, store, llm, chunk_tokens=chunk_tokens,
                                        locator=loc, skip_chunks=skip, prices=table,
                                        on_chunk=done))
        except IngestError as exc:
            fail(str(exc), f"fix the cause, then run again with --skip {exc.chunk.index - 1}.")
        except KeyboardInterrupt:
            again = shlex.join(["memdir", "ingest", str(store_path), str(source),
                                "--model", chosen, "--skip", str(integrated[0])])
            fail(f"interrupted: the chunk in progress was undone; {integrated[0]} of {total} "
                 "chunk(s) are in the store.", f"resume with `{again}`.",
                 code=ExitCode.INTERRUPTED)
        except ValueError as exc:
            fail(str(exc))
    if not as_json:
        err_console.print(
            f"[dim]{len(result.chunks)} chunk(s) integrated into {escape(str(store.root))}; "
            f"total {result.usage.total:,} tokens, "
            f"{escape(format_cost(result.cost, chosen))}[/]"
        )


def _between_chunks(store: Store, writer: str, *, quiet: bool) -> Callable[[], None]:
    """Sync the replica now, and return the sync to run after each chunk."""
    from memdir.store.replica import Replica

    replica = Replica(store)
    if replica.url is None:
        fail(f"--sync needs a remote, and the store at {store.root} has none.",
             "attach one with `memdir history STORE remote URL`.")

    def run() -> None:
        try:
            report = replica.sync(writers=[writer])
        except StoreError as exc:
            err_console.print(f"[red]sync failed:[/] {escape(str(exc))}")
            return
        if not quiet:
            err_console.print(escape(report.summary()))

    run()
    return run


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to the command line."""
    app.command("ingest")(ingest_command)
