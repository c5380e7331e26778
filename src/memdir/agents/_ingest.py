"""``ingest``: the management agent folds a conversation into a store, chunk by chunk.

Each chunk is all-or-nothing: the store's files are snapshotted before the
chunk begins, and if the chunk fails (a model error that survived inspect_ai's
retries, a cancellation) the store is restored byte for byte and the error is
raised with the chunks that did complete. ``skip_chunks`` resumes a run.

The snapshot is also kept on disk while the chunk runs (a journal in the store's
hidden ``.memdir`` folder, written atomically, removed when the chunk is done),
so a process killed mid-chunk (SIGKILL, a power cut) is repaired too: the next
``ingest`` of the store, or :func:`recover_ingest`, puts the files back as they
were before that chunk, as a build folder is reset to its last snapshot.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai.model import Model

from memdir.agents._loop import run_agent
from memdir.agents._prices import PriceTable
from memdir.agents._prompts import load_prompt
from memdir.agents._records import EpisodeRecord
from memdir.agents._roles import WRITE_BUDGET, RoleConfig, declare_role
from memdir.agents._snapshot import StoreSnapshot, restore, snapshot
from memdir.agents._usage import Usage
from memdir.conversation import (
    Chunk,
    Conversation,
    LocatorKind,
    chunk_conversation,
    load_conversation,
)
from memdir.store import Store, atomic_write
from memdir.tools import make_toolset

__all__ = [
    "MANAGEMENT_ROLE",
    "ChunkOutcome",
    "IngestError",
    "IngestResult",
    "ingest",
    "recover_ingest",
]

MANAGEMENT_ROLE = declare_role(
    "management", prompt="management-conversation", toolset="write", **WRITE_BUDGET
)
"""The management agent ``ingest`` runs (the curated study variant builds with it too)."""

_STATE = ".memdir"
"""The store's hidden state folder, which snapshots neither take nor restore."""
_JOURNAL = "ingest-chunk.json"


@dataclass(frozen=True)
class ChunkOutcome:
    """One integrated chunk: its label, the agent's summary and its record."""

    index: int
    label: str
    summary: str
    record: EpisodeRecord
    cost: float | None


@dataclass
class IngestResult:
    """Every chunk integrated so far."""

    chunks: list[ChunkOutcome] = field(default_factory=list)
    total_chunks: int = 0
    recovered_chunk: int | None = None
    """The chunk an earlier, killed run was in, undone before this run began."""

    @property
    def usage(self) -> Usage:
        """Tokens over every chunk."""
        return sum((c.record.usage for c in self.chunks), Usage())

    @property
    def cost(self) -> float | None:
        """Dollars over every chunk; None if any chunk's price is unknown."""
        costs = [c.cost for c in self.chunks]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


class IngestError(RuntimeError):
    """A chunk failed; the store is as it was before that chunk began."""

    def __init__(self, message: str, result: IngestResult, chunk: Chunk) -> None:
        super().__init__(message)
        self.result = result
        self.chunk = chunk


async def ingest(
    source: str | Path | Conversation,
    store: Store,
    model: Model | str,
    *,
    role: RoleConfig | None = None,
    chunk_tokens: int = 8000,
    locator: LocatorKind | None = None,
    skip_chunks: int = 0,
    prices: PriceTable | None = None,
    on_chunk: Callable[[ChunkOutcome], None] | None = None,
) -> IngestResult:
    """Run the management agent over a conversation, one chunk at a time.

    Args:
        source: A conversation file (JSON turns format or plain text) or a
            :class:`memdir.conversation.Conversation`.
        store: The store to write into.
        model: The management model (``provider/model`` or an inspect_ai model).
        role: Budget and settings; the management defaults if None (the prompt
            follows the locators unless the role names another).
        chunk_tokens: Largest chunk, in tokens of its rendered turns; longer
            sessions are split at turn boundaries into near-equal parts.
        locator: ``session`` (``[S1T2]``) or ``block`` (``[B1M2]``) source
            locators; None keeps a loaded conversation's own (a file gets ``session``).
        skip_chunks: Chunks already integrated by an earlier run (resume).
        prices: Price table for the chunk costs (the shipped one if None).
        on_chunk: Called after each chunk completes.

    Raises:
        IngestError: A chunk failed; the store was restored to its state before it.
        ValueError: The source cannot be read, or an earlier run's journal is
            unreadable (see :func:`recover_ingest`).
    """
    if isinstance(source, Conversation):
        conversation = source if locator is None else source.with_locators(locator)
    else:
        conversation = load_conversation(source, locator=locator or "session")
    if role is None:
        blocks = conversation.locator_kind == "block"
        prompt = "management-blocks" if blocks else "management-conversation"
        role = MANAGEMENT_ROLE.with_(prompt=prompt)
    system = load_prompt(role.prompt)
    prices = prices or PriceTable.load()
    chunks = chunk_conversation(conversation, chunk_tokens)
    result = IngestResult(total_chunks=len(chunks), recovered_chunk=recover_ingest(store))
    for chunk in chunks[skip_chunks:]:
        user = load_prompt("turn-chunk", label=chunk.label, chunk=chunk.text).text
        tools = make_toolset(role.toolset, store) if role.toolset else None
        before = _begin_chunk(store, chunk)
        try:
            run = await run_agent(model, role, system, user, tools)
        except BaseException as exc:
            restore(store, before)
            _end_chunk(store)
            if not isinstance(exc, Exception):
                raise
            cause = str(exc).rstrip(".")
            raise IngestError(
                f"chunk {chunk.index} of {len(chunks)} ({chunk.label}) failed: {cause}. "
                f"The store was restored to its state before this chunk; "
                f"{len(result.chunks)} chunk(s) of this run completed. Rerun with "
                f"skip_chunks={chunk.index - 1} (--skip {chunk.index - 1}) to resume.",
                result,
                chunk,
            ) from exc
        _end_chunk(store)
        outcome = ChunkOutcome(
            chunk.index, chunk.label, run.text, run.record,
            prices.cost(run.record.model, run.record.usage),
        )
        result.chunks.append(outcome)
        if on_chunk is not None:
            on_chunk(outcome)
    return result


def _journal(store: Store) -> Path:
    return store.root / _STATE / _JOURNAL


def _begin_chunk(store: Store, chunk: Chunk) -> StoreSnapshot:
    """Snapshot the store, in memory and in the journal, before ``chunk`` touches it."""
    before = snapshot(store)
    record = {
        "version": 1,
        "chunk": chunk.index,
        "label": chunk.label,
        "folders": sorted(before.folders),
        "files": {rel: base64.b64encode(data).decode("ascii")
                  for rel, data in before.files.items()},
    }
    atomic_write(_journal(store), json.dumps(record).encode("utf-8"))
    return before


def _end_chunk(store: Store) -> None:
    """The chunk is done (or undone): drop its journal, durably."""
    path = _journal(store)
    path.unlink(missing_ok=True)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover_ingest(store: Store) -> int | None:
    """Undo the chunk an ingest of ``store`` was running when its process died.

    The store's files are put back exactly as they were before that chunk
    began (files it created removed, files it changed or deleted rewritten).
    :func:`ingest` calls this first, so resuming a killed run repairs it.

    Returns:
        The index of the chunk undone, or None if no chunk was left unfinished.

    Raises:
        ValueError: The journal cannot be read; the message says how to proceed.
    """
    path = _journal(store)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        record = json.loads(raw)
        index = int(record["chunk"])
        folders = frozenset(str(f) for f in record["folders"])
        files = {str(rel): base64.b64decode(data, validate=True)
                 for rel, data in record["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"{path} (the snapshot of an ingest chunk that never finished) cannot be read "
            f"({exc}); delete it to keep the store as it is, or restore the store from a "
            "backup"
        ) from None
    restore(store, StoreSnapshot(store.root, files, folders))
    _end_chunk(store)
    return index
