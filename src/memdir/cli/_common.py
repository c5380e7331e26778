"""Helpers shared by the command-line modules: opening a store, exit codes, output.

Exit codes mean the same thing in every subcommand: 0 everything went well,
1 the command ran and found something (lint findings, a failed check), 2 the
command could not do what was asked (bad usage, no store, a tool error).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Mapping
from enum import IntEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from memdir.config import get_settings
from memdir.store import Store, StoreError
from memdir.tools import TOOLSET_NAMES, ToolResult, ToolSet, make_toolset

STATE_DIR = ".memdir"
"""The hidden folder a store keeps its lock in (``memdir.store`` does not export the name)."""

__all__ = [
    "ExitCode",
    "StoreArg",
    "call_tool",
    "console",
    "err_console",
    "fail",
    "is_store",
    "load_toolset",
    "open_store",
    "print_result",
]

StoreArg = Annotated[Path, typer.Argument(metavar="STORE", help="The store's folder.")]
"""The STORE argument every store command takes first."""

console = Console(soft_wrap=True, highlight=False)
"""Rich output on stdout (never wraps lines, so copied paths stay whole)."""
err_console = Console(stderr=True, soft_wrap=True, highlight=False)
"""Messages and errors on stderr."""


class ExitCode(IntEnum):
    """What a ``memdir`` process's exit status means."""

    OK = 0
    FINDINGS = 1
    ERROR = 2


def fail(message: str, hint: str | None = None, code: ExitCode = ExitCode.ERROR) -> NoReturn:
    """Print an error (and what to do about it) on stderr and exit.

    Args:
        message: What went wrong.
        hint: The next step the user should take.
        code: The exit status.
    """
    err_console.print(f"[bold red]error:[/] {escape(message)}")
    if hint:
        err_console.print(f"[dim]hint:[/] {escape(hint)}")
    raise typer.Exit(int(code))


def open_store(path: Path) -> Store:
    """Open the store at ``path``, or exit with a message saying how to get one.

    Args:
        path: The store's host folder.
    """
    if not path.exists():
        fail(f"no store at {path}: the folder does not exist.",
             f"create one with `memdir init {shlex.quote(str(path))}` "
             "(add --sample for a small example store).")
    if not path.is_dir():
        fail(f"{path} is a file, not a store folder.",
             "pass the folder that holds the memory files.")
    try:
        return Store(path, max_file_bytes=get_settings().max_file_bytes)
    except (StoreError, OSError) as exc:
        fail(f"cannot open the store at {path}: {exc}")


def is_store(path: Path) -> bool:
    """Whether ``path`` has already been opened as a store (it holds the state folder)."""
    return (path / STATE_DIR).is_dir()


def load_toolset(name: str, store: Store) -> ToolSet:
    """Build a tool set by name, or exit saying which names exist.

    Args:
        name: One of the tool-set names (write, read, bm25, chunk, shell, folder).
        store: The store the tools act on.
    """
    if name not in TOOLSET_NAMES:
        fail(f"unknown tool set {name!r}.", f"choose one of: {', '.join(TOOLSET_NAMES)}.")
    try:
        return make_toolset(name, store)
    except ImportError as exc:
        fail(f"the {name} tool set is not available in this installation ({exc}).",
             "use another set, e.g. --set read.")


def call_tool(toolset: ToolSet, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
    """Run one call through :meth:`ToolSet.call`, the path every model call takes."""
    return asyncio.run(toolset.call(name, arguments))


def print_result(result: ToolResult) -> None:
    """Print a tool result for a person: content on stdout, or an error on stderr and exit 2."""
    if result.is_error:
        fail(result.content.removeprefix("Error: "))
    typer.echo(result.content)
