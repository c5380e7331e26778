"""The typer application behind ``memdir`` (see :mod:`memdir.cli`).

Each subcommand lives in its own module of this package, named after the
command, and exposes ``register(app)``. Modules are found by listing this
package and imported only when their command runs (or its help is asked
for), so ``memdir --help`` never pays for the study's or the agents' imports,
and adding a subcommand never edits this file. The one-line summary
``memdir --help`` shows for a command is the first line of its module's
docstring, read from the file without importing it.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperGroup

__all__ = ["app"]

_PACKAGE = Path(__file__).resolve().parent
_CLI = "memdir.cli"
_DOCSTRING_LINE = re.compile(r'\A(?:#[^\n]*\n|\s)*[rRuU]?"""\s*([^\n]*?)\s*(?:"""|\n)')
_COMMAND_PREFIX = re.compile(r"\A(?:``memdir [^`]*``(?:\s*/\s*)?)+:\s*")


@cache
def _command_modules() -> dict[str, str]:
    """Command name to module name, for every public module of this package."""
    names = sorted(m.name for m in pkgutil.iter_modules([str(_PACKAGE)]))
    return {name.replace("_", "-"): name for name in names if not name.startswith("_")}


def _summary(module: str) -> str:
    """The first line of a command module's docstring, without its ```memdir X``:`` lead."""
    try:
        head = (_PACKAGE / f"{module}.py").read_text(encoding="utf-8")[:2000]
    except OSError:
        return ""
    match = _DOCSTRING_LINE.match(head)
    if match is None:
        return ""
    line = _COMMAND_PREFIX.sub("", match.group(1)).replace("``", "")
    return line[:1].upper() + line[1:]


class _Argument(TyperArgument):
    """A positional argument named the way man pages and click name one.

    Typer writes a required argument as ``{STORE}`` in usage lines, which a
    reader copies into a shell as a literal brace; here it reads ``STORE``
    (optional ones stay ``[PATH]``), and an argument without a metavar is
    shown in capitals (``STEP``), as the help texts refer to it.
    """

    @property
    def display_name_raw(self) -> str:
        return self.metavar if self.metavar is not None else (self.name or "").upper()

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


def _plain_arguments(command: Any) -> None:
    """Make every positional argument of ``command`` (and its subcommands) an :class:`_Argument`."""
    for param in command.params:
        if type(param) is TyperArgument:
            param.__class__ = _Argument
    for sub in getattr(command, "commands", {}).values():
        _plain_arguments(sub)


class _LazyGroup(TyperGroup):
    """The top-level group: subcommands are imported on first use.

    Listing the commands (``memdir --help``, shell completion of a command
    name) shows placeholders carrying each module's summary; resolving a
    command to run it, to show its own help, or to complete its options and
    subcommands (``memdir tree ./m --<TAB>``), imports the real one.
    """

    _listing = False
    _resolving = False

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted({*self.commands, *_command_modules()})

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        module = _command_modules().get(cmd_name)
        if module is None:
            return None
        if self._listing or (ctx.resilient_parsing and not self._resolving):
            return typer.core.TyperCommand(cmd_name, help=_summary(module))
        return self._load(cmd_name, module)

    def _load(self, cmd_name: str, module: str) -> Any:
        register = getattr(importlib.import_module(f"{_CLI}.{module}"), "register", None)
        if register is None:
            return None
        scratch = typer.Typer(rich_markup_mode=None)
        register(scratch)
        for name, command in typer.main.get_group(scratch).commands.items():
            _plain_arguments(command)
            self.commands.setdefault(name, command)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0]
        listing, self._listing, self._resolving = self._listing, False, True
        try:
            command = self.get_command(ctx, name)
        finally:
            self._listing, self._resolving = listing, False
        if command is None and not ctx.resilient_parsing:
            if name.startswith("-"):
                self.parse_args(ctx, args)
            close = difflib.get_close_matches(name, self.list_commands(ctx))
            also = f" Did you mean {', '.join(repr(m) for m in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{also}")
        return (name if command else None), command, args[1:]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"memdir {version('memdir')}")
        raise typer.Exit()


app = typer.Typer(
    name="memdir",
    cls=_LazyGroup,
    rich_markup_mode=None,
    help="Filesystem-based memory for LLM agents: a store of markdown files, "
    "the tools agents use on it, and the study framework to measure them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True,
                     help="Print memdir's version and exit."),
    ] = False,
) -> None:
    """Options of ``memdir`` itself (the help text is the app's)."""
    if ctx.resilient_parsing:
        return
    from memdir.config import SettingsError, get_settings

    try:
        get_settings()
    except SettingsError as exc:
        from memdir.cli._common import fail

        fail(f"bad environment setting: {exc}.",
             f"fix the value, or unset it to use the default: `unset {' '.join(exc.variables)}`.")

