"""``memdir browse``: look at a store, its history or a run in a web browser."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memdir.cli._common import ExitCode, cannot_bind, err_console, fail, keep_startup_heap
from memdir.config import get_settings

if TYPE_CHECKING:
    from memdir.browse import ConversationRef
    from memdir.conversation import Conversation

__all__ = ["browse", "parse_conversation", "register"]


def parse_conversation(value: str, data_dir: Path | None) -> ConversationRef | Conversation:
    """``locomo:conv-50`` (a benchmark's conversation), ``sample``, or a conversation file."""
    from memdir.browse import ConversationRef

    if value == "sample":
        from memdir.sample import load_sample_conversation

        return load_sample_conversation()
    path = Path(value).expanduser()
    if path.is_file():
        return ConversationRef(None, None, None, file=path)
    benchmark, sep, conversation_id = value.partition(":")
    if not sep or benchmark not in ("locomo", "realtalk", "personamem") or not conversation_id:
        fail(f"--conversation {value!r} is neither a file nor BENCHMARK:ID.",
             "give e.g. --conversation locomo:conv-50, sample (the store of `memdir init "
             "--sample`), or a conversation JSON file.")
    return ConversationRef(benchmark, conversation_id, data_dir)


def browse(
    target: Annotated[Path, typer.Argument(
        metavar="STORE|RUN", help="A store, a build folder, a study run or a skills run folder.")],
    conversation: Annotated[str | None, typer.Option(
        "--conversation", "-c", help="The conversation a plain store was built from, to link "
        "its [S5T3] locators: BENCHMARK:ID (e.g. locomo:conv-50), sample (the shipped "
        "sample conversation) or a conversation file. Runs and build folders name their "
        "own.")] = None,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", help="The benchmark data folder (default: MEMDIR_DATA_DIR, or what "
        "the run recorded).")] = None,
    host: Annotated[str, typer.Option(
        "--host", help="The loopback address to bind (127.0.0.1, ::1 or localhost).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                      help="TCP port (0: any free one).")] = 8766,
) -> None:
    """Browse a store, its history of snapshots, or a study or skills run.

    Serves read-only pages on a loopback address: the taxonomy tree with
    descriptions, sizes and headings; each file rendered with its frontmatter
    apart, cross-references linked to their sections (dangling ones marked) and
    source locators linked to their conversation turns; grep and ranked search;
    lint defects and health alarms; the history with diffs and growth curves;
    and a run's cells, questions and citations (each opens the cited lines).

    Every request must carry the session's token, a fresh random one of its
    own (never the MCP server's): open the printed URL, whose path starts with
    it. No cookie is set, and the pages load nothing from anywhere else. Nothing
    is ever written to the store.

    Exit status: 0 stopped cleanly, 2 nothing to browse or refused options.

    For example:

        memdir browse ./memories --conversation sample

        memdir browse ./memories --conversation locomo:conv-50

        memdir browse runs/offline-smoke
    """
    from memdir.browse import BrowseError, open_target, serve
    from memdir.server import LoopbackError, is_loopback

    if not is_loopback(host):
        fail(f"refusing to bind {host}: other machines could read the store.",
             "use --host 127.0.0.1 (the browser serves loopback addresses only).")
    settings = get_settings()
    data = data_dir or settings.data_dir
    ref = parse_conversation(conversation, data) if conversation else None
    try:
        catalog = open_target(target, conversation=ref, data_dir=data)
    except (BrowseError, FileNotFoundError, ValueError) as exc:
        fail(str(exc), "give a store folder, or a run folder written by `memdir study run` "
             "or `memdir skills run`.")
    # A token of the session's own: never MEMDIR_MCP_TOKEN (a page that leaked it would
    # open the MCP server too), never from the command line (other users see it in ps).
    secret = secrets.token_urlsafe(32)

    def ready(url: str) -> None:
        err_console.print(f"memdir browse: {catalog.title}, {len(catalog.stores)} store(s).",
                          markup=False, highlight=False)
        for key, why in catalog.missing.items():
            err_console.print(f"note: store {key} cannot be shown: {why}", markup=False,
                              highlight=False)
        err_console.print(f"open {url}  (Ctrl-C stops it)")

    problem = cannot_bind(host, port) if port else None
    if problem:  # said in one line, as memdir serve says it, not in uvicorn's traceback
        fail(f"cannot listen on {host}:{port}: {problem}.",
             "pick a free port with --port (0: any free one), or stop whatever holds this one.")
    keep_startup_heap()
    try:
        serve(catalog, host=host, port=port, token=secret, ready=ready)
    except LoopbackError as exc:
        fail(str(exc), "use --host 127.0.0.1.")
    except KeyboardInterrupt:
        err_console.print("stopped.")
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    except SystemExit as exc:  # uvicorn exits this way when it cannot bind
        if exc.code:
            fail(f"the browser could not listen on {host}:{port}.",
                 "pick a free port with --port, or stop whatever holds this one.")


def register(app: typer.Typer) -> None:
    """Add ``browse`` to the command line."""
    app.command("browse")(browse)
