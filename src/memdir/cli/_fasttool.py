"""``memdir tool`` without the command-line framework, for calls of the read-only sets.

Building the typer application and coercing its arguments loads typer and
much of pydantic, which costs about as much as a ranked search of a large
store. A call whose arguments are plain (a store folder, ``--set`` naming one
of the read-only sets ``read``, ``bm25`` or ``chunk``, and the call as JSON,
each in its ordinary spelling) is run here through the same dispatcher
(:meth:`memdir.tools.ToolSet.call`) and printed as ``memdir tool`` prints it:
the tool's text and a newline on standard output, exit status 2 when the tool
returned an error. Anything else (help, ``--list``, a call read from standard
input, a set that writes, a call or setting the command would refuse, output
that ``memdir tool`` would alter on its way to a pipe) goes to the full
command line, which answers it from the start: nothing is printed here unless
the call ran and its text can be printed as it is. A call handed on after it
ran is run again there, which only reads.

For the ranked sets (``bm25``, ``chunk``) the store's file listing is started
first, in a ``find`` process of its own (:mod:`memdir.tools._bm25walk`), so the
check of every file against the saved index runs while the rest loads; and a
``search`` builds the ``search`` tool alone, not the read tools beside it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["run"]

_READ_ONLY_SETS = ("read", "bm25", "chunk")
_RANKED_TOOLS = {"bm25": '"search"', "chunk": '"bm25_chunk_retrieve"'}
"""The ranked sets, each with its ranked tool's name as a call spells it."""
_MARKDOWN_SUFFIXES = (".md",)
"""``memdir.store.MARKDOWN.suffixes``: the index takes the listing only if they agree."""
_ERROR = 2
"""``memdir.cli._common.ExitCode.ERROR``, without importing typer."""


def _parse(argv: Sequence[str]) -> tuple[str, str, str] | None:
    """The store, set name and call of a plain call, or None."""
    positional: list[str] = []
    set_name = "read"
    words = iter(argv)
    for word in words:
        if word == "--set":
            value = next(words, None)
            if value is None or value.startswith("-"):
                return None
            set_name = value
        elif word.startswith("-"):
            return None  # --help, --list, '-' (stdin), --set=X, ...
        else:
            positional.append(word)
    if len(positional) != 2 or set_name not in _READ_ONLY_SETS:
        return None
    return positional[0], set_name, positional[1]


def _call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The tool name and arguments of a call ``memdir tool`` would accept as written."""
    from memdir.tools._arguments import read_json

    try:
        call = read_json(text)
    except ValueError:
        return None
    if not isinstance(call, dict) or set(call) - {"name", "arguments"}:
        return None
    name, arguments = call.get("name"), call.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        return None
    return name, arguments


def _printable(text: str) -> bool:
    """Whether ``typer.echo`` would print ``text`` unchanged (no escapes to strip, encodable)."""
    if "\x1b" in text:
        return False
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _toolset(set_name: str, tool: str, store: Any) -> Any:
    """The ``bm25`` set cut to its ``search`` tool for a search, or None for the whole set.

    A call is answered by its own tool alone (:meth:`memdir.tools.ToolSet.call`
    looks the name up and runs that spec), so a search need not build the read
    tools beside it, nor import what they need (the grep engine among them).
    """
    if set_name != "bm25" or tool != "search":
        return None
    from memdir.tools._ranked import search_spec
    from memdir.tools._spec import ToolSet

    return ToolSet("bm25", [search_spec(store)])


def run(argv: Sequence[str]) -> bool:
    """Answer ``memdir tool ARGV`` if the call is plain; False hands it to the full command line.

    Raises:
        SystemExit: With status 2 after printing a tool's error, as ``memdir tool`` exits.
    """
    parsed = _parse(argv)
    if parsed is None:
        return False
    folder, set_name, text = parsed
    ranked = _RANKED_TOOLS.get(set_name)
    if ranked is not None and ranked in text and os.path.isdir(folder):
        # A ranked tool checks every file against the saved index: that walk starts
        # now, in a process of its own, and runs while the imports below load. (The
        # call is read later; a call that only looks like a ranked one costs a walk
        # that is stopped at exit, one that is spelt otherwise goes without.)
        from memdir.tools._bm25walk import start

        start(os.path.realpath(os.path.expanduser(folder)), _MARKDOWN_SUFFIXES)
    call = _call(text)
    if call is None or not os.path.isdir(folder):
        return False
    if set_name == "bm25" and call[0] == "search":
        found = _search(folder, call[1])
        if found is not None:
            return _print(*found)
    import asyncio

    from memdir.config import SettingsError, get_settings
    from memdir.store import Store, StoreError
    from memdir.tools import make_toolset
    from memdir.tools._textcache import single_use

    try:  # the full command line checks every setting before any command
        settings = get_settings()
        store = Store(Path(folder), max_file_bytes=settings.max_file_bytes, sweep_now=False)
        toolset = _toolset(set_name, call[0], store) or make_toolset(set_name, store)
    except (SettingsError, StoreError, OSError, ImportError):
        return False
    with single_use():  # one call, then the process exits: no text is worth keeping
        result = asyncio.run(toolset.call(*call))
    return _print(result.content, result.is_error)


def _search(folder: str, arguments: dict[str, Any]) -> tuple[str, bool] | None:
    """A ``bm25`` search answered without the tool set, asyncio or pydantic; None hands it on.

    Taken when the settings and the arguments are plain enough to need no
    judging (:func:`memdir._environment.plain_settings`,
    :func:`memdir.tools._ranked.search_call`); the answer is then the one
    :meth:`memdir.tools.ToolSet.call` gives, computed the same way.
    """
    import importlib.util

    from memdir._environment import plain_settings

    settings = plain_settings()
    if settings is None:
        return None
    from memdir.store import Store, StoreError

    if importlib.util.find_spec("numpy") is None:
        # A missing library is the app's to report. (Looked for, not loaded: a search
        # answered from the saved index as it is never needs it, memdir.tools._bm25light.)
        return None
    try:
        import memdir.tools._bm25terms  # noqa: F401 - bm25s's stopwords: the same
        from memdir.tools._limits import CallLimits
        from memdir.tools._ranked import search_call

        store = Store(Path(folder), max_file_bytes=settings.max_file_bytes, sweep_now=False)
    except (StoreError, OSError, ImportError):
        return None
    result = search_call(store, arguments,
                         CallLimits(settings.tool_time_limit, settings.tool_output_chars))
    return None if result is None else (result.content, result.is_error)


def _print(content: str, is_error: bool) -> bool:
    """Print a tool's text as ``memdir tool`` does; False if it would alter it on the way."""
    if not _printable(content):
        return False
    sys.stdout.write(content + "\n")
    sys.stdout.flush()
    if is_error:
        raise SystemExit(_ERROR)
    return True
