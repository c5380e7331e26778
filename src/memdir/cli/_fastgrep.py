r"""``memdir grep`` without the command-line framework: the search itself, and a quick start.

Building the typer application and coercing its arguments loads typer and
pydantic, which costs several times what a search of a large store does. A call
whose arguments are plain (a store, a pattern, and only the options the
command documents, each in its ordinary spelling) is parsed here and answered
straight away; anything else (help, a usage mistake, an error of any kind) goes
to the full command line, so what a user sees there is exactly the same. The
grep command and this path make their text with :func:`grep_output` and print
it with :func:`emit`, as GNU grep would: a reader that closes the pipe early
(``memdir grep ... | head -1``) ends the command quietly, by ``SIGPIPE`` as it
ends grep (status 141 in a shell), and a character the output's encoding cannot
show (``PYTHONIOENCODING=ascii``) is printed as a backslash escape (a JSON
``\u`` escape in ``--json`` output, which stays valid JSON).
"""

from __future__ import annotations

import codecs
import itertools
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memdir.store import Store

__all__ = ["emit", "grep_output", "run"]

_ENV_PREFIX = "MEMDIR_"  # memdir.config.ENV_PREFIX, without importing the settings model
_FLAGS = {"-i": "ignore_case", "--ignore-case": "ignore_case", "--json": "as_json"}
_VALUED = {"-p": "path", "--path": "path", "--max-results": "max_results"}


def grep_output(store: Store, pattern: str, path: str, max_results: int | None,
                ignore_case: bool, as_json: bool) -> str:
    """What ``memdir grep`` prints for a search that worked.

    Raises:
        ToolError: The pattern or a limit is not accepted.
        StoreError: ``path`` is not in the store.
    """
    from memdir.tools._grep import grep_store, grep_text

    # One search per process: the files are read as the search reaches them and
    # let go, not kept in the store's text cache for a next search there is none of.
    if as_json:
        found = grep_store(store, pattern, path, ignore_case, cache=False)
        limit = None if max_results is None else max_results + 1
        hits = list(itertools.islice(found, limit))
        complete = max_results is None or len(hits) <= max_results
        return json.dumps({
            "pattern": pattern, "path": store.resolve(path).virtual,
            "hits": [{"path": h.path, "line": h.line, "text": h.text}
                     for h in hits[:max_results]],
            "complete": complete,
        }, indent=2, ensure_ascii=False)
    # The grep tool's own text, so it is the model's, without building the whole
    # read set (its other tools' schemas) or an event loop for one call.
    return grep_text(store, pattern, path, 50 if max_results is None else max_results,
                     ignore_case, cache=False)


def emit(text: str, *, as_json: bool = False) -> None:
    r"""Print ``text`` and a newline on standard output, as grep prints its matches.

    A closed pipe ends the process by ``SIGPIPE``, silently, as it ends GNU grep.
    Characters the stream's encoding lacks are written as backslash escapes:
    Python's (``\xe9``), or JSON's (``\u00e9``) when ``as_json``.
    """
    out = sys.stdout
    if getattr(out, "errors", None) == "strict" and hasattr(out, "reconfigure"):
        out.reconfigure(errors=_JSON_ESCAPES if as_json else "backslashreplace")
    try:
        out.write(text + "\n")
        out.flush()
    except BrokenPipeError:
        _end_by_closed_pipe()


def _json_escape(exc: UnicodeError) -> tuple[str, int]:
    r"""An encoding error handler writing what cannot be encoded as JSON ``\u`` escapes."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    units = exc.object[exc.start:exc.end].encode("utf-16-be", "surrogatepass")
    escaped = "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}"
                      for i in range(0, len(units), 2))
    return escaped, exc.end


_JSON_ESCAPES = "memdir.json-escapes"
codecs.register_error(_JSON_ESCAPES, _json_escape)


def _end_by_closed_pipe() -> None:
    """Stop the process as SIGPIPE stops grep: no message, status 128 + 13 to a shell."""
    # Nothing may be flushed to the closed pipe at exit (that would print a traceback).
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    raise SystemExit(141)  # where there is no SIGPIPE (or it did not stop us)


def _parse(argv: Sequence[str]) -> dict[str, Any] | None:
    """The grep command's arguments, or None where the full command line must decide."""
    from memdir.store import ROOT

    options: dict[str, Any] = {"path": ROOT, "max_results": None, "ignore_case": False,
                               "as_json": False}
    positional: list[str] = []
    words = iter(argv)
    for word in words:
        if word in _FLAGS:
            options[_FLAGS[word]] = True
        elif word in _VALUED:
            value = next(words, None)
            if value is None or value.startswith("-"):
                return None
            options[_VALUED[word]] = value
        elif word.startswith("-"):
            return None  # --help, --, -ip, --path=X, a pattern that looks like an option...
        else:
            positional.append(word)
    if len(positional) != 2:
        return None
    limit = options["max_results"]
    if limit is not None:
        if not (limit.isascii() and limit.isdigit()) or int(limit) < 1:
            return None
        options["max_results"] = int(limit)
    options["store"], options["pattern"] = positional
    return options


def run(argv: Sequence[str]) -> bool:
    """Answer ``memdir grep ARGV`` if the call is plain and succeeds; False hands it on.

    Nothing is printed unless the search worked, so a call handed on to the
    full command line is answered there from the start.
    """
    options = _parse(argv)
    if options is None:
        return False
    from memdir.store import Store, StoreError
    from memdir.tools._spec import ToolError

    settings: dict[str, Any] = {}
    if any(key.upper().startswith(_ENV_PREFIX) for key in os.environ):
        from memdir.config import SettingsError, get_settings

        try:  # the full command line checks every setting before any command
            settings["max_file_bytes"] = get_settings().max_file_bytes
        except SettingsError:
            return False
    folder = Path(options["store"])
    if not folder.is_dir():
        return False
    try:
        store = Store(folder, sweep_now=False, **settings)  # grep only reads
        text = grep_output(store, options["pattern"], options["path"], options["max_results"],
                           options["ignore_case"], options["as_json"])
    except (StoreError, ToolError, OSError):
        return False
    if "\x1b" in text:
        return False  # the full command line strips terminal escapes from piped output
    emit(text, as_json=options["as_json"])
    return True
