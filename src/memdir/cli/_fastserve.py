"""``memdir serve`` over stdio: start reading the client before anything heavy loads.

A client that spawns ``memdir serve STORE`` sends ``initialize`` at once and
waits for its answer, while the command line, the tool set and the MCP SDK load
(over a second). For a call whose arguments are plain (a store folder and only
the stdio options ``--write``, ``--set NAME``, ``--profile NAME`` and
``--transport stdio``, each in its ordinary spelling), :func:`start` begins
reading standard input on its own thread before any of that is imported, and
answers the opening itself, as the SDK would (see
:mod:`memdir.server._handshake`); the ``serve`` command then hands the feed to
the server, which reads every line from it in order. Any other call (help, http,
tenants, sync, a usage mistake) is left to the full command line untouched.

One difference remains, and only where the command fails after the opening was
answered (a ``MEMDIR_*`` setting it refuses, a tool set it does not know, a
store it cannot open): the client has its ``initialize`` answer, then sees the
process end with the error on standard error, where without the early answer
the process would have ended first.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdir.server._handshake import StdinFeed

__all__ = ["feed", "serving", "start"]

_FLAGS = frozenset({"--write"})
_VALUED = frozenset({"--set", "--profile", "--transport", "-t"})
_STARTED: list[StdinFeed] = []


def _plain(argv: Sequence[str]) -> bool:
    """Whether ``serve ARGV`` is a plain stdio call (see the module's docstring)."""
    positional: list[str] = []
    options: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        if word in _FLAGS:
            options[word] = ""
        elif word in _VALUED:
            value = next(words, None)
            if value is None or value.startswith("-"):
                return False
            options["--transport" if word == "-t" else word] = value
        elif word.startswith("-"):
            return False  # --help, --, --set=X, http options, --sync, --tenants...
        else:
            positional.append(word)
    if len(positional) != 1 or not os.path.isdir(positional[0]):
        return False
    if options.get("--transport", "stdio") != "stdio" \
            or options.get("--profile", "memdir") not in ("memdir", "anthropic"):
        return False
    # Combinations the command refuses go to it unanswered, as before.
    return "--set" not in options or ("--write" not in options
                                      and options.get("--profile", "memdir") == "memdir")


def start(argv: Sequence[str]) -> None:
    """Start reading standard input for ``memdir serve ARGV``, if the call is plain."""
    if _STARTED or not _plain(argv):
        return
    from memdir.server._handshake import StdinFeed

    # The handler goes in first: the feed answers the client on its own thread, and
    # a Ctrl-C sent as soon as that answer arrives must find the handler in place.
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop_while_loading)
    _STARTED.append(StdinFeed(0, 1).start())


def _stop_while_loading(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C before the server runs: stop at once, as Ctrl-C stops it serving.

    The client may have its answers already, while the command line and the SDK
    still load. A KeyboardInterrupt raised there lands wherever the import is
    (typer turns one during its parsing into a silent exit), so the process ends
    here instead; nothing of the store has been written yet.
    """
    os.write(2, b"stopped.\n")
    os._exit(130)


def serving() -> None:
    """The server is about to run: Ctrl-C raises KeyboardInterrupt again, for its loop."""
    if signal.getsignal(signal.SIGINT) is _stop_while_loading:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def feed() -> StdinFeed | None:
    """The feed :func:`start` started, if it did (the serve command hands it on)."""
    return _STARTED[0] if _STARTED else None
