"""Ranked retrieval tools: BM25 whole-file search and the top-3 chunk retriever.

``bm25`` set (the Center+BM25 harness): the read set plus ``search``, which
ranks whole files by BM25 over path words, description and body, and shows for
each hit its description and the lines that best match the query, with their
line numbers, so the model can open exactly that range with ``view``.

``chunk`` set (the Chunk-retrieval variant): one tool, ``bm25_chunk_retrieve``,
that returns the three best files of the store in full. Every file of the store
is a chunk. Both tools share :class:`~memdir.tools._bm25index.FileIndex`, which
is kept in step with the files on every call.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from memdir.store import ROOT, NotFoundError, Store, StoreError
from memdir.store._deadline import CallTimeoutError, deadline
from memdir.tools._limits import _GRACE_SECONDS, CallLimits, cap_text, echo
from memdir.tools._spec import (
    ToolError,
    ToolResult,
    ToolSet,
    ToolSpec,
    _capped,
    _too_slow,
    tool_flags,
    tool_spec,
)

if TYPE_CHECKING:
    from memdir.store import StorePath
    from memdir.tools._bm25index import FileIndex
    from memdir.tools._bm25terms import Hit, LineMatch

__all__ = [
    "CHUNK_CHARS",
    "CHUNK_HEADER",
    "CHUNK_TOP_K",
    "RANKED_FILE",
    "RANKED_LINE",
    "bm25_folder_set",
    "bm25_set",
    "bm25_write_set",
    "chunk_header",
    "ranked_file_line",
    "ranked_line",
    "chunk_set",
    "chunk_spec",
    "search_call",
    "search_now",
    "search_spec",
]

CHUNK_TOP_K = 3
"""How many chunks ``bm25_chunk_retrieve`` returns."""
CHUNK_CHARS = 50_000
"""Most characters of one chunk shown (a paper chunk of 8,000 tokens is about 35,000)."""

CHUNK_HEADER = re.compile(rf"^=== (?P<path>{ROOT}/.+\.md) ===$", re.MULTILINE)
"""The line :func:`chunk_header` puts above each chunk ``bm25_chunk_retrieve`` returns."""
RANKED_FILE = re.compile(
    rf"^(?P<rank>\d+)\. (?P<path>{ROOT}/.+?\.md) \(score (?P<score>-?\d+\.\d\d)\)$",
    re.MULTILINE,
)
"""A hit's first line in a ``search`` result, as :func:`ranked_file_line` writes it."""
RANKED_LINE = re.compile(r"^   L(?P<line>\d+): (?P<text>.*)$", re.MULTILINE)
"""One of a hit's best lines in a ``search`` result, as :func:`ranked_line` writes it."""
_MAX_K = 50
_LINE_CHARS = 200
_PLAIN_DESCRIPTION = re.compile(r"^description:[ \t]*([^\n#]*?)[ \t]*$", re.MULTILINE)


def _no_terms(query: str) -> ToolError:
    return ToolError(
        f"The query {echo(query)} has no searchable words: BM25 ignores punctuation, single "
        "characters and common words such as 'the' or 'what'. Ask with content words: "
        "names, places, topics, distinctive terms."
    )


async def _ranked(index: FileIndex, query: str, k: int, under: str) -> list[Hit]:
    if not index.tokenizer(query):
        raise _no_terms(query)

    def run() -> list[Hit]:
        index.refresh()
        return index.search(query, k, under)

    import asyncio  # here: a search run by search_now needs no event loop

    return await asyncio.to_thread(run)


def _description(text: str) -> str | None:
    """The description of a file in the plain one-line form, without a YAML parse."""
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    match = _PLAIN_DESCRIPTION.search(text, 3, end if end > 0 else 0)
    if match is None or match.group(1).startswith(("'", '"', "|", ">", "[", "{")):
        return None
    return match.group(1)


def _clip(line: str) -> str:
    line = line.strip()
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 3] + "..."


def _chunk_text(text: str) -> str:
    if len(text) <= CHUNK_CHARS:
        return text
    return (
        f"{text[:CHUNK_CHARS]}\n[cut: this chunk has {len(text):,} characters; the first "
        f"{CHUNK_CHARS:,} are shown. Ask with other words to reach other chunks.]"
    )


def search_spec(store: Store) -> ToolSpec:
    """The ``search`` tool: BM25 ranking of whole files."""
    from memdir.tools._bm25index import index_for  # numpy and bm25s load with a ranked set

    index = index_for(store)

    @tool_flags(read_only=True)
    async def search(query: str, k: int = 10, path: str = ROOT) -> str:
        """Rank the memory files by how well they match a query (BM25 keyword search).

        Scores every markdown file by the words it shares with the query, weighting
        rare words more, over the file's path, description and content. Word order
        and meaning are ignored, so use the distinctive words you expect the answer
        to contain (names, places, topics) rather than a full question. Each hit
        shows its path, description and score, then up to three lines that match
        best, as `L<number>: text`; open one with view and a view_range around that
        line. Files sharing no word with the query are left out.

        Args:
            query: Keywords to look for, e.g. "alice birthday party".
            k: How many files to return at most (1 to 50).
            path: Only rank files in this folder (and below), e.g. /memories/people.
        """
        folder = _scope(store, k, path)
        hits = await _ranked(index, query, k, folder.virtual)
        return _report(store, index, query, folder, hits)

    return tool_spec(search)


def search_now(store: Store, query: str, k: int = 10, path: str = ROOT) -> str:
    """What the ``search`` tool of :func:`search_spec` answers, computed on this thread.

    For a caller with no event loop to keep free (``memdir tool``, which then
    needs neither asyncio nor the tool's argument model); the checks, their
    order and their errors are the tool's. Where this process's listing of the
    store shows it unchanged since its index was saved, the answer is read
    from the saved file without numpy (:mod:`memdir.tools._bm25light`), the
    same bytes; otherwise the shared index answers.

    Raises:
        ToolError: ``k`` out of range, or a query with no searchable word.
        StoreError: ``path`` is not a folder of the store.
    """
    from memdir.tools._bm25light import search as light_search
    from memdir.tools._bm25terms import Tokenizer

    folder = _scope(store, k, path)
    tokenizer = Tokenizer()
    if not tokenizer(query):
        raise _no_terms(query)
    light = light_search(store, tokenizer, query, k, folder.virtual)
    if light is not None:
        return _report(store, light, query, folder, light.hits)
    from memdir.tools._bm25index import index_for

    index = index_for(store)
    index.refresh()
    return _report(store, index, query, folder, index.search(query, k, folder.virtual))


_SEARCH_PARAMETERS = {"query": str, "k": int, "path": str}


def search_call(store: Store, arguments: Mapping[str, Any], limits: CallLimits
                ) -> ToolResult | None:
    """A ``search`` call answered as :meth:`memdir.tools.ToolSet.call` answers it, or None.

    None when the arguments are not plain: anything but a ``query`` string and
    an optional ``k`` integer and ``path`` string, or values the dispatcher's
    checks (:func:`memdir.tools._arguments.argument_problem`) refuse. The
    argument model takes plain arguments as they are, so the call can skip
    it; anything else is the dispatcher's to judge and explain. The search runs
    on a thread of its own under the call's deadline, and a search still
    running shortly after it is answered with the dispatcher's time-limit
    error (the thread is left to end with the process).
    """
    from memdir.tools._arguments import argument_problem

    if "query" not in arguments or argument_problem(arguments) is not None or any(
            type(value) is not _SEARCH_PARAMETERS.get(key) for key, value in arguments.items()):
        return None
    found: list[str | BaseException] = []

    def run() -> None:
        try:
            with deadline(limits.seconds, interruptible=True):
                found.append(search_now(store, **arguments))
        except BaseException as exc:  # handed to the caller's thread, which re-raises it
            found.append(exc)

    worker = threading.Thread(target=run, name="memdir-tool-call", daemon=True)
    worker.start()
    # A limit past what a lock can wait (MEMDIR_TOOL_TIME_LIMIT=100000000000 is a
    # valid setting) waits as long as one can; the dispatcher's asyncio timer takes it.
    worker.join(min(limits.seconds + _GRACE_SECONDS, threading.TIMEOUT_MAX))
    if not found:
        return ToolResult("search", _too_slow("search", limits.seconds), True)
    outcome = found[0]
    if isinstance(outcome, (ToolError, StoreError)):
        return ToolResult("search", _capped(f"Error: {outcome}", limits), True)
    if isinstance(outcome, CallTimeoutError):
        return ToolResult("search", _too_slow("search", limits.seconds), True)
    if isinstance(outcome, BaseException):
        raise outcome
    hint = "Ask search for less (a line range, a narrower path or query) to see the rest."
    return ToolResult("search", cap_text(outcome, limits.output_chars, hint))


def _scope(store: Store, k: int, path: str) -> StorePath:
    """The folder a search ranks, once ``k`` and ``path`` are found valid."""
    if not 1 <= k <= _MAX_K:
        raise ToolError(f"k must be between 1 and {_MAX_K}; you gave {k}.")
    folder = store.resolve(path, "dir")
    if not folder.host.is_dir():
        raise NotFoundError(
            f"{folder.virtual} is not a folder of the store. "
            f"Search {ROOT} or view it to see the folders."
        )
    return folder


class _Lines(Protocol):
    """What shows a hit's best lines: the index, or a search answered without it."""

    def best_lines(self, text: str, query: str, limit: int = 3) -> list[LineMatch]: ...


def _report(store: Store, index: _Lines, query: str, folder: StorePath,
            hits: list[Hit]) -> str:
    """A search's answer: each hit's path, score, description and best lines."""
    scope = "" if folder.is_root else f" under {folder.virtual}"
    if not hits:
        return (
            f"No file{scope} contains any word of {echo(query)}. Try other words "
            "(synonyms, names) or list the folders with view."
        )
    plural = "s" if len(hits) > 1 else ""
    lines = [f"{len(hits)} file{plural} ranked for {echo(query)}{scope}, best first:"]
    for rank, hit in enumerate(hits, start=1):
        lines.append("")
        lines.append(ranked_file_line(rank, hit.path, hit.score))
        try:
            text = store.read(hit.path)
            desc = _description(text) or store.description(hit.path)
        except StoreError as exc:
            lines.append(f"   (cannot be read: {exc})")
            continue
        lines.append(f"   {desc}" if desc else "   (no description)")
        for match in index.best_lines(text, query):
            lines.append(ranked_line(match.line, _clip(match.text)))
    return "\n".join(lines)


def chunk_spec(store: Store) -> ToolSpec:
    """The ``bm25_chunk_retrieve`` tool: the three best chunk files, in full."""
    from memdir.tools._bm25index import index_for  # numpy and bm25s load with a ranked set

    index = index_for(store)

    @tool_flags(read_only=True)
    async def bm25_chunk_retrieve(query: str) -> str:
        """Fetch the three conversation chunks that best match a query, in full.

        The memory is a set of chunk files, each holding a stretch of past
        conversation. This ranks them by the words they share with the query
        (BM25: rare words count more, word order is ignored) and returns the top
        three, best first, each under a line `=== <chunk path> ===`. Use
        distinctive words you expect in the answer: names, places, objects, events.
        Call again with different words if the chunks do not hold the answer.

        Args:
            query: Keywords to look for, e.g. "Melanie pottery class".
        """
        hits = await _ranked(index, query, CHUNK_TOP_K, ROOT)
        if not hits:
            return f"No chunk contains any word of {echo(query)}. Try other words."
        parts = []
        for hit in hits:
            try:
                text = store.read(hit.path)
            except StoreError as exc:
                parts.append(f"{chunk_header(hit.path)}\n(cannot be read: {exc})\n")
                continue
            parts.append(f"{chunk_header(hit.path)}\n{_chunk_text(text.rstrip())}\n")
        return "\n".join(parts)

    return tool_spec(bm25_chunk_retrieve)


def ranked_file_line(rank: int, path: str, score: float) -> str:
    """A hit's first line in a ``search`` result: ``2. /memories/a.md (score 3.14)``."""
    return f"{rank}. {path} (score {score:.2f})"


def ranked_line(number: int, text: str) -> str:
    """One of a hit's best lines in a ``search`` result: ``   L12: the line``."""
    return f"   L{number}: {text}"


def chunk_header(path: str) -> str:
    """The line above a chunk in a ``bm25_chunk_retrieve`` result (:data:`CHUNK_HEADER`)."""
    return f"=== {path} ==="


def bm25_set(store: Store) -> ToolSet:
    """The Center+BM25 harness: the read tools plus ``search``."""
    from memdir.tools._memory import read_specs

    return ToolSet("bm25", [*read_specs(store), search_spec(store)])


def bm25_write_set(store: Store) -> ToolSet:
    """The Center+BM25 harness's builder set: the write tools plus ``search``."""
    from memdir.tools._memory import write_set

    return ToolSet("bm25-write", [*write_set(store).tools.values(), search_spec(store)])


def bm25_folder_set(store: Store) -> ToolSet:
    """The Center+BM25 harness's foldering set: view, grep, rename plus ``search``."""
    from memdir.tools._memory import folder_set

    return ToolSet("bm25-folder", [*folder_set(store).tools.values(), search_spec(store)])


def chunk_set(store: Store) -> ToolSet:
    """The chunk-retrieval harness: ``bm25_chunk_retrieve`` alone."""
    return ToolSet("chunk", [chunk_spec(store)])
