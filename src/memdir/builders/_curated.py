"""The agent-curated store: the management agent builds it from empty, chunk by chunk.

Each chunk of the conversation is one episode of the management role (the
write tools), with the same user turn :func:`memdir.agents.ingest` sends, and
ends in one git snapshot. A failed chunk leaves the store at the last finished
one; rerunning the same build resumes with the next chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inspect_ai.model import Model

from memdir.agents import PriceTable, RoleConfig
from memdir.builders._episodes import BuiltStore, final_record, model_name, run_unit
from memdir.builders._folder import BuildFolder
from memdir.builders._key import BuildSpec, builder_role, user_turn
from memdir.builders._record import UnitRecord
from memdir.conversation import DEFAULT_CHUNK_TOKENS, Conversation, chunk_conversation
from memdir.progress import progress
from memdir.tools._harness import DEFAULT_HARNESS

__all__ = ["build_curated"]


async def build_curated(conversation: Conversation, cache: str | Path, model: Model | str, *,
                        role: RoleConfig | None = None, harness: str = DEFAULT_HARNESS,
                        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                        prices: PriceTable | None = None,
                        on_chunk: Callable[[UnitRecord], None] | None = None) -> BuiltStore:
    """Build (or reuse, or resume) the agent-curated store of ``conversation``.

    Args:
        conversation: The conversation to integrate.
        cache: The folder holding build folders (one per configuration key).
        model: The management model.
        role: The management role's settings (defaults, with the prompt fitted to
            the conversation's locators and worded for the harness, if None).
        harness: The harness whose builder tools the management agent writes with.
        chunk_tokens: The chunking rule's token budget.
        prices: Price table for the cost (the shipped one if None).
        on_chunk: Called after each chunk is snapshotted.

    Raises:
        BuildError: A chunk failed; the store is left at the last finished chunk.
    """
    role = role or builder_role("curated", conversation, harness=harness)
    spec = BuildSpec.make("curated", conversation, model_name(model), role,
                          chunk_tokens=chunk_tokens, harness=harness)
    folder = BuildFolder(Path(cache), spec)
    with folder.open(lambda store: None, "empty store"):
        if folder.state.record is not None:
            return BuiltStore(folder.store, folder.history,
                              folder.state.record.model_copy(update={"reused": True}),
                              folder.path)
        table = prices or PriceTable.load()
        chunks = chunk_conversation(conversation, chunk_tokens)
        with progress(len(chunks), "chunk", done=len(folder.state.units)) as shown:
            for chunk in chunks[len(folder.state.units):]:
                user = user_turn("curated", label=chunk.label, chunk=chunk.text)
                unit, _ = await run_unit(folder, model, role, user, table, "chunk",
                                         chunk.index, chunk.label)
                folder.commit(unit)
                shown.step(chunk.label)
                if on_chunk is not None:
                    on_chunk(unit)
        record = final_record(folder, conversation, chunk_tokens=chunk_tokens)
        folder.finish(record)
        return BuiltStore(folder.store, folder.history, record, folder.path)
