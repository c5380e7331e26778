"""Foldered sessions: the verbatim dump, moved by a model into folders it designs.

One episode of the foldering role (view, grep and a rename that only moves)
runs over a fresh verbatim dump. The result is then verified: every dump file
is present exactly once with identical bytes and nothing else is in the store
(:func:`verify_foldering`); anything else fails the build.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.model import Model

from memdir.agents import PriceTable, RoleConfig
from memdir.builders._episodes import BuiltStore, final_record, model_name, run_unit
from memdir.builders._folder import BuildFolder
from memdir.builders._key import BuildSpec, builder_role, user_turn
from memdir.builders._record import BuildError
from memdir.builders._verify import verify_foldering
from memdir.builders._zero_cost import build_verbatim, verbatim_files
from memdir.conversation import Conversation
from memdir.tools._harness import DEFAULT_HARNESS

__all__ = ["build_foldered"]


async def build_foldered(conversation: Conversation, cache: str | Path, model: Model | str, *,
                         role: RoleConfig | None = None, harness: str = DEFAULT_HARNESS,
                         prices: PriceTable | None = None) -> BuiltStore:
    """Build (or reuse, or resume) the foldered store of ``conversation``.

    Args:
        conversation: The conversation whose verbatim dump gets foldered.
        cache: The folder holding build folders (one per configuration key).
        model: The foldering model.
        role: The foldering role's settings (the harness's defaults if None).
        harness: The harness whose tools the foldering runs with; under ``shell`` it
            moves files with ``mv`` (the check that only moves happened still holds).
        prices: Price table for the cost (the shipped one if None).

    Raises:
        BuildError: The model failed, or the result is not the dump moved into folders.
    """
    role = role or builder_role("foldered", conversation, harness=harness)
    spec = BuildSpec.make("foldered", conversation, model_name(model), role, harness=harness)
    dump = verbatim_files(conversation)
    folder = BuildFolder(Path(cache), spec)
    with folder.open(lambda store: build_verbatim(conversation, store), "verbatim dump"):
        if folder.state.record is not None:
            verify_foldering(folder.store, dump)  # the cached store must still hold
            return BuiltStore(folder.store, folder.history,
                              folder.state.record.model_copy(update={"reused": True}),
                              folder.path)
        if not folder.state.units:
            user = user_turn("foldered", count=str(len(dump)))
            unit, _ = await run_unit(folder, model, role, user, prices or PriceTable.load(),
                                     "episode", 1, "foldering")
            try:
                verify_foldering(folder.store, dump)
            except BuildError:
                folder.reset()
                raise
            folder.commit(unit)
        report = verify_foldering(folder.store, dump)
        record = final_record(folder, conversation, moves=report.moves, folders=report.folders)
        folder.finish(record)
        return BuiltStore(folder.store, folder.history, record, folder.path)

