"""Builders that need no model: the verbatim dump, the chunk store, and closed-book.

Both stores are flat, deterministic renderings of the conversation through the
one chunking rule of :mod:`memdir.conversation`, so the same turn reads the same
way in every variant.
"""

from __future__ import annotations

import time

from memdir.builders._record import BuildRecord
from memdir.conversation import (
    DEFAULT_CHUNK_TOKENS,
    Chunk,
    Conversation,
    Session,
    chunk_conversation,
    render_session,
    session_date,
)
from memdir.store import Frontmatter, Store, render_file

__all__ = [
    "CHUNK_FOLDER",
    "build_chunk_store",
    "build_closed_book",
    "build_verbatim",
    "chunk_files",
    "session_file",
    "verbatim_files",
]

CHUNK_FOLDER = "/memories/chunks"


def _width(count: int) -> int:
    return max(2, len(str(count)))


def session_file(session: Session, count: int) -> str:
    """The store path of a session in the verbatim dump, e.g. ``/memories/session-03.md``."""
    return f"/memories/session-{session.index:0{_width(count)}d}.md"


def _session_description(session: Session) -> str:
    parts = [f"Session {session.index}"]
    when = session_date(session)
    if when is not None:
        parts.append(when)
    speakers = [s for s in session.speakers if s != "System"]
    if speakers:
        parts.append(_and_list(speakers))
    return "; ".join(parts)


def _and_list(names: list[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def verbatim_files(conversation: Conversation) -> list[tuple[str, str]]:
    """The verbatim dump as (store path, file text) pairs, one per session."""
    files = []
    count = max((s.index for s in conversation.sessions), default=0)
    for session in conversation.sessions:
        if not session.turns:
            continue
        path = session_file(session, count)
        name = path.rsplit("/", 1)[1].removesuffix(".md")
        header = Frontmatter(name=name, description=_session_description(session))
        files.append((path, render_file(header, render_session(session))))
    return files


def _write_all(store: Store, files: list[tuple[str, str]]) -> tuple[list[str], int]:
    size = 0
    for path, text in files:
        store.create(path, text)
        size += len(text.encode("utf-8"))
    return [path for path, _ in files], size


def build_verbatim(conversation: Conversation, store: Store) -> BuildRecord:
    """Write one file per session, turns verbatim with their locators.

    The description gives only the session's number, date and speakers.

    Raises:
        memdir.store.FileExistsInStoreError: A session file already exists (use an empty store).
    """
    start = time.perf_counter()
    paths, size = _write_all(store, verbatim_files(conversation))
    return BuildRecord(
        variant="verbatim", conversation_id=conversation.id, benchmark=conversation.benchmark,
        files=paths, bytes=size, wall_seconds=time.perf_counter() - start,
    )


def _chunk_description(chunk: Chunk) -> str:
    parts = [chunk.title]
    if chunk.date_text is not None:
        parts.append(chunk.date_text)
    parts.append(f"turns {chunk.span}")
    return "; ".join(parts)


def chunk_files(
    conversation: Conversation, budget: int = DEFAULT_CHUNK_TOKENS
) -> list[tuple[str, str]]:
    """The chunk store as (store path, file text) pairs, one per chunk.

    A chunk file is named by its session and its part, e.g. ``session-04-chunk-02.md``
    (the session number as wide as the verbatim dump's, the part two digits).
    """
    chunks = chunk_conversation(conversation, budget)
    width = _width(max((s.index for s in conversation.sessions), default=0))
    files = []
    for chunk in chunks:
        name = f"session-{chunk.session:0{width}d}-chunk-{chunk.part:02d}"
        header = Frontmatter(name=name, description=_chunk_description(chunk))
        files.append((f"{CHUNK_FOLDER}/{name}.md", render_file(header, chunk.text)))
    return files


def build_chunk_store(
    conversation: Conversation, store: Store, budget: int = DEFAULT_CHUNK_TOKENS
) -> BuildRecord:
    """Write one file per chunk under ``/memories/chunks/`` (``session-01-chunk-01.md``, ...).

    This is the store the chunk variant's BM25 tool reads.

    Args:
        conversation: The conversation to store.
        store: An empty store.
        budget: The chunking rule's token budget.
    """
    start = time.perf_counter()
    paths, size = _write_all(store, chunk_files(conversation, budget))
    return BuildRecord(
        variant="chunk", conversation_id=conversation.id,
        benchmark=conversation.benchmark, files=paths, bytes=size,
        wall_seconds=time.perf_counter() - start, chunk_tokens=budget,
    )


def build_closed_book(conversation: Conversation) -> BuildRecord:
    """Closed-book keeps no store; its record says so, for uniform bookkeeping."""
    return BuildRecord(
        variant="closed-book", conversation_id=conversation.id, benchmark=conversation.benchmark
    )
