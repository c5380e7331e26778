"""Helpers shared by the command-line modules: opening a store, exit codes, output.

Exit codes mean the same thing in every subcommand: 0 everything went well,
1 the command ran and found something (lint findings, a failed check), 2 the
command could not do what was asked (bad usage, no store, a tool error), 130
stopped by Ctrl-C.
"""

from __future__ import annotations

import functools
import logging
import re
import shlex
import socket
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from enum import IntEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar, cast

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from memdir.store import Store
    from memdir.tools import ToolResult, ToolSet

# What the commands need is imported inside the helpers, so a command pays only
# for what it uses (rich for styled output, the ranked index for the bm25 set).

STATE_DIR = ".memdir"
"""The hidden folder a store keeps its lock in (``memdir.store`` does not export the name)."""

__all__ = [
    "ExitCode",
    "StoreArg",
    "call_tool",
    "console",
    "err_console",
    "cannot_bind",
    "fail",
    "inspect_view_command",
    "errors_as_json",
    "is_store",
    "json_errors",
    "load_toolset",
    "open_store",
    "print_json",
    "printable",
    "print_result",
    "runnable",
    "show_model_retries",
]

StoreArg = Annotated[Path, typer.Argument(metavar="STORE", help="The store's folder.")]
"""The STORE argument every store command takes first."""



@cache
def _console(stderr: bool) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, soft_wrap=True, highlight=False)


def __getattr__(name: str) -> Any:
    # ``console`` (rich output on stdout; never wraps lines, so copied paths stay
    # whole) and ``err_console`` (messages and errors on stderr), made on first use.
    if name == "console":
        return _console(False)
    if name == "err_console":
        return _console(True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    console: Console
    err_console: Console


class ExitCode(IntEnum):
    """What a ``memdir`` process's exit status means."""

    OK = 0
    FINDINGS = 1
    ERROR = 2
    INTERRUPTED = 130
    """Stopped by Ctrl-C (128 + SIGINT, as shells report it)."""


@cache
def _invocation() -> str:
    """How the user's shell starts memdir.

    ``uv run memdir`` under ``uv run``, ``memdir`` when it is on PATH, else this
    interpreter's ``python -m memdir``.
    """
    import os
    import shutil
    import sys

    if os.environ.get("UV"):  # set by `uv run` for the process it starts
        return "uv run memdir"
    if shutil.which("memdir"):
        return "memdir"
    return f"{shlex.quote(sys.executable)} -m memdir"


def runnable(text: str) -> str:
    """``text`` with every ```memdir ...``` command written the way this shell can run it.

    Hints quote commands in backticks (```memdir init ./memories```); after
    ``uv sync`` alone ``memdir`` is not on PATH, so those become ``uv run memdir ...``
    (or ``python -m memdir ...``), and a hint can be pasted as printed.
    """
    prefix = _invocation()
    if prefix == "memdir":
        return text
    return text.replace("`memdir ", f"`{prefix} ").replace("[bold]memdir ", f"[bold]{prefix} ")


def cannot_bind(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound right now, or None if it can."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"unknown host ({exc.strerror})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def inspect_view_command(log_folder: Path) -> str:
    """``inspect view`` for a log folder, started the way this shell starts memdir."""
    start = runnable("`memdir `")[1:-len("memdir `")]  # "", "uv run " or "python -m "
    program = "inspect_ai" if start.endswith("-m ") else "inspect"
    return f"{start}{program} view --log-dir {shlex.quote(str(log_folder))}"


def fail(message: str, hint: str | None = None, code: ExitCode = ExitCode.ERROR) -> NoReturn:
    """Print an error (and what to do about it) on stderr and exit.

    Args:
        message: What went wrong.
        hint: The next step the user should take.
        code: The exit status.
    """
    if _JSON_ERRORS.get():
        import json

        typer.echo(json.dumps({"error": runnable(message),
                               "hint": runnable(hint) if hint else None,
                               "exit_code": int(code)}, ensure_ascii=False))
        raise typer.Exit(int(code))
    from rich.markup import escape

    err = _console(True)
    err.print(f"[bold red]error:[/] {escape(runnable(message))}")
    if hint:
        err.print(f"[dim]hint:[/] {escape(runnable(hint))}")
    raise typer.Exit(int(code))


_JSON_ERRORS: ContextVar[bool] = ContextVar("memdir_json_errors", default=False)


@contextmanager
def errors_as_json(on: bool) -> Iterator[None]:
    """Inside the block, :func:`fail` prints a JSON object on stdout (for ``--json`` output)."""
    token = _JSON_ERRORS.set(on)
    try:
        yield
    finally:
        _JSON_ERRORS.reset(token)


F = TypeVar("F", bound=Callable[..., Any])


def json_errors(command: F) -> F:
    """A command whose ``--json`` (its ``as_json`` parameter) also turns errors into JSON.

    With ``--json`` set, every :func:`fail` inside the command prints
    ``{"error": ..., "hint": ..., "exit_code": 2}`` on stdout instead of text
    lines on stderr, so a script reading the output always gets one object.
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        with errors_as_json(bool(kwargs.get("as_json"))):
            return command(*args, **kwargs)

    return cast(F, run)


class _RetryLine(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        from rich.markup import escape

        _console(True).print(f"[yellow]retry:[/] {escape(record.getMessage())}")


def show_model_retries() -> None:
    """Print each model-call retry (``memdir.agents`` warnings) as one line on stderr."""
    logger = logging.getLogger("memdir.agents")
    if not any(isinstance(h, _RetryLine) for h in logger.handlers):
        logger.addHandler(_RetryLine(logging.WARNING))
        logger.propagate = False


def keep_startup_heap() -> None:
    """Tell Python's collector that what start-up built lives as long as the process.

    A server keeps its modules, tool set or catalog until it stops. Frozen
    (:func:`gc.freeze`), those objects are left out of every later collection,
    and out of the one at exit: a process that had loaded inspect_ai spent one to
    two seconds collecting after Ctrl-C had already printed "stopped.".
    """
    import gc

    gc.freeze()


def open_store(path: Path, *, reads_only: bool = False) -> Store:
    """Open the store at ``path``, or exit with a message saying how to get one.

    Args:
        path: The store's host folder.
        reads_only: Leave the sweep of stale temporary files to the first write
            (``Store(sweep_now=False)``; a write always sweeps before it starts): for a
            command that never writes, or one that should start without a walk of the
            whole tree (``memdir tool``, ``memdir serve``).
    """
    from memdir.config import get_settings
    from memdir.store import Store, StoreError

    if not path.exists():
        fail(f"no store at {path}: the folder does not exist.",
             f"create one with `memdir init {shlex.quote(str(path))}` "
             "(add --sample for a small example store).")
    if not path.is_dir():
        fail(f"{path} is a file, not a store folder.",
             "pass the folder that holds the memory files.")
    try:
        return Store(path, max_file_bytes=get_settings().max_file_bytes,
                     sweep_now=not reads_only)
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
    from memdir.tools import TOOLSET_NAMES, make_toolset

    if name not in TOOLSET_NAMES:
        fail(f"unknown tool set {name!r}.", f"choose one of: {', '.join(TOOLSET_NAMES)}.")
    try:
        return make_toolset(name, store)
    except ImportError as exc:
        fail(f"the {name} tool set is not available in this installation ({exc}).",
             "use another set, e.g. --set read.")


def call_tool(toolset: ToolSet, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
    """Run one call through :meth:`ToolSet.call`, the path every model call takes."""
    import asyncio

    return asyncio.run(toolset.call(name, arguments))


def print_json(data: object) -> None:
    """Print ``data`` as indented JSON on stdout (the ``--json`` form of every command)."""
    import json

    text = json.dumps(data, indent=2, ensure_ascii=False)
    # A file name that is not UTF-8 holds lone surrogates (os.fsdecode's escapes),
    # which no output encoding takes: JSON writes them as \u escapes, which a JSON
    # reader turns back into the same name.
    if not text.isascii():
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    typer.echo(text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def printable(text: str) -> str:
    r"""``text`` with the bytes of non-UTF-8 file names written as ``\xff``.

    Names read from the disk keep bytes that are not UTF-8 as lone surrogates
    (``surrogateescape``); printed as they are, they stop the output with an
    encoding error.
    """
    if text.isascii():
        return text
    return _ESCAPED_BYTE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)


def print_result(result: ToolResult) -> None:
    """Print a tool result for a person: content on stdout, or an error on stderr and exit 2."""
    if result.is_error:
        fail(result.content.removeprefix("Error: "))
    typer.echo(result.content)
