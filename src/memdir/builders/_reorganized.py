"""Reorganized stores: a model rewrites the verbatim dump by topic, pass after pass.

Each pass is one episode of the reorganizer role (the write tools) with a user
turn naming the pass. The build stops after ``max_passes`` passes, or earlier
at the first pass that leaves every byte of the store as it found it. The
preserve and condense versions differ only by the reorganizer prompt's
keep-every-fact rule.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.model import Model

from memdir.agents import PriceTable, RoleConfig
from memdir.builders._episodes import BuiltStore, final_record, model_name, run_unit
from memdir.builders._folder import BuildFolder
from memdir.builders._key import BuildSpec, builder_role, user_turn
from memdir.builders._verify import store_bytes
from memdir.builders._zero_cost import build_verbatim
from memdir.conversation import Conversation
from memdir.progress import progress
from memdir.tools._harness import DEFAULT_HARNESS

__all__ = ["DEFAULT_MAX_PASSES", "build_reorganized"]

DEFAULT_MAX_PASSES = 5


async def build_reorganized(conversation: Conversation, cache: str | Path, model: Model | str,
                            *, condense: bool = False, role: RoleConfig | None = None,
                            harness: str = DEFAULT_HARNESS,
                            max_passes: int = DEFAULT_MAX_PASSES,
                            prices: PriceTable | None = None) -> BuiltStore:
    """Build (or reuse, or resume) a reorganized store of ``conversation``.

    Args:
        conversation: The conversation whose verbatim dump gets rewritten.
        cache: The folder holding build folders (one per configuration key).
        model: The reorganizer model.
        condense: Build the condensed version (no keep-every-fact rule).
        role: The reorganizer's settings (defaults, with the prompt fitted to the
            conversation's locators and worded for the harness, if None).
        harness: The harness whose builder tools the reorganizer writes with.
        max_passes: Most passes to run; a pass that changes nothing ends earlier.
        prices: Price table for the cost (the shipped one if None).

    Raises:
        BuildError: A pass failed; the store is left at the last finished pass.
        ValueError: ``max_passes`` is below 1.
    """
    if max_passes < 1:
        raise ValueError(f"max_passes must be at least 1, not {max_passes}")
    variant = "reorganized-condense" if condense else "reorganized-preserve"
    role = role or builder_role(variant, conversation, harness=harness)
    spec = BuildSpec.make(variant, conversation, model_name(model), role, max_passes=max_passes,
                          harness=harness)
    folder = BuildFolder(Path(cache), spec)
    with folder.open(lambda store: build_verbatim(conversation, store), "verbatim dump"):
        if folder.state.record is not None:
            return BuiltStore(folder.store, folder.history,
                              folder.state.record.model_copy(update={"reused": True}),
                              folder.path)
        table = prices or PriceTable.load()
        units = folder.state.units
        with progress(max_passes, "pass", done=len(units)) as shown:  # at most max_passes
            while not units or (units[-1].changed and len(units) < max_passes):
                number = len(units) + 1
                before = store_bytes(folder.store)
                user = user_turn(variant, number=str(number), total=str(max_passes))
                unit, _ = await run_unit(folder, model, role, user, table, "pass", number,
                                         f"pass {number} of {max_passes}")
                changed = store_bytes(folder.store) != before
                folder.commit(unit.model_copy(update={"changed": changed}))
                units = folder.state.units
                shown.step("" if changed else "nothing changed: done")
        record = final_record(folder, conversation, max_passes=max_passes,
                              stopped_early=not units[-1].changed)
        folder.finish(record)
        return BuiltStore(folder.store, folder.history, record, folder.path)
