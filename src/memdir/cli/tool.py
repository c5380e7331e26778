"""``memdir tool``: run one tool call exactly as a model's call would run."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from memdir.cli._common import ExitCode, StoreArg, call_tool, fail, load_toolset, open_store
from memdir.tools import TOOLSET_NAMES

__all__ = ["parse_call", "register", "tool"]

_FORM = '{"name": "view", "arguments": {"path": "/memories"}}'


def parse_call(text: str) -> tuple[str, dict[str, Any]]:
    """Read a call written as ``{"name": ..., "arguments": {...}}``.

    Args:
        text: The JSON text; ``arguments`` may be omitted when the tool takes none.

    Raises:
        ValueError: The text is not of that form (the message says what is wrong).
    """
    from memdir.tools._arguments import read_json

    try:  # as ToolSet.call reads arguments: any depth, any number, checked there
        call = read_json(text)
    except ValueError as exc:
        raise ValueError(f"the call is {exc}") from None
    if not isinstance(call, dict):
        raise ValueError("the call must be a JSON object")
    unknown = set(call) - {"name", "arguments"}
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(sorted(unknown))}; "
                         "a call has only 'name' and 'arguments'")
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("the call needs a 'name' naming the tool")
    arguments = call.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValueError("'arguments' must be a JSON object of parameter names to values")
    return name, arguments


def tool(
    store_path: StoreArg,
    call: Annotated[
        str | None,
        typer.Argument(metavar="CALL", help="The call as JSON, e.g. " + _FORM
                       + "; '-' reads it from standard input."),
    ] = None,
    set_name: Annotated[
        str,
        typer.Option("--set", metavar="SET",
                     help="The tool set: " + ", ".join(TOOLSET_NAMES) + "."),
    ] = "read",
    list_tools: Annotated[
        bool,
        typer.Option("--list", help="Print the set's tool declarations (name, description, "
                     "JSON schema) as JSON instead of running a call."),
    ] = False,
) -> None:
    """Run one tool call against a store, exactly as a model's call would run.

    The call goes through the same dispatcher as an agent's or the MCP
    server's, and what is printed on standard output is exactly the text the
    model would see, error messages included. A call is a JSON object with
    the tool's "name" and its "arguments". Tools of the write set change the
    store.

    Exit status: 0 the tool succeeded, 2 the tool returned an error (the
    message is on standard output, as the model would see it) or the call
    could not be read.

    For example:

    \b
        memdir tool ./memories \\
            '{"name": "toc", "arguments": {"path": "/memories/people/maya.md"}}'
        memdir tool ./memories --set write --list
        echo '{"name": "view", "arguments": {"path": "/memories"}}' \\
            | memdir tool ./memories -
    """  # noqa: D301 (click shows a paragraph after \b as written, unwrapped)
    toolset = load_toolset(set_name, open_store(store_path, reads_only=True))  # writes sweep
    if list_tools:
        if call is not None:
            fail("--list takes no CALL.", "drop the call, or drop --list to run it.")
        typer.echo(json.dumps(toolset.infos(), indent=2, ensure_ascii=False))
        return
    if call is None:
        fail("no CALL given.", f"pass one such as '{_FORM}', or --list to see the tools.")
    text = sys.stdin.read() if call == "-" else call
    try:
        name, arguments = parse_call(text)
    except ValueError as exc:
        fail(f"cannot read the call: {exc}.", f"write it as '{_FORM}'.")
    from memdir.tools._textcache import single_use

    with single_use():  # this process answers one call: no text is worth keeping
        result = call_tool(toolset, name, arguments)
    typer.echo(result.content)
    if result.is_error:
        raise typer.Exit(int(ExitCode.ERROR))


def register(app: typer.Typer) -> None:
    """Add ``tool`` to the command line."""
    app.command("tool")(tool)
