"""Pieces every model-driven build shares: one unit's episode, and the final record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from inspect_ai.model import Model

from memdir.agents import PriceTable, RoleConfig, load_prompt, run_agent
from memdir.builders._folder import BuildFolder
from memdir.builders._record import BuildError, BuildRecord, UnitRecord, unit_totals
from memdir.conversation import Conversation
from memdir.store import Store
from memdir.store.history import History
from memdir.tools import make_toolset

__all__ = ["BuiltStore", "final_record", "model_name", "run_unit"]


@dataclass(frozen=True)
class BuiltStore:
    """A finished model-built store: where it lives, its history and its record."""

    store: Store
    history: History
    record: BuildRecord
    folder: Path


def model_name(model: Model | str) -> str:
    """``provider/model`` of a model given by name or as an inspect_ai model."""
    return model if isinstance(model, str) else str(model)


async def run_unit(folder: BuildFolder, model: Model | str, role: RoleConfig, user: str,
                   prices: PriceTable, kind: Literal["chunk", "pass", "episode"], index: int,
                   label: str) -> tuple[UnitRecord, str]:
    """Run one episode of ``role`` on the build's store; return its record and final text.

    A failed episode (a model error that survived retries, a cancellation) puts
    the store back to its last snapshot before the error goes on.

    Raises:
        BuildError: The model failed; the message says which unit and how to resume.
    """
    tools = make_toolset(role.toolset, folder.store) if role.toolset else None
    try:
        run = await run_agent(model, role, load_prompt(role.prompt), user, tools)
    except BaseException as exc:
        folder.reset()
        if not isinstance(exc, Exception):
            raise
        done = len(folder.state.units)
        cause = str(exc).rstrip(".")
        raise BuildError(
            f"{kind} {index} ({label}) of the {folder.spec.variant} build failed: {cause}. "
            f"The store is back at its last snapshot ({done} unit(s) done); rerun the "
            f"same build to resume from there ({folder.path})."
        ) from exc
    cost = prices.cost(run.record.model, run.record.usage)
    return UnitRecord.from_episode(kind, index, label, run.record, cost), run.text


def final_record(folder: BuildFolder, conversation: Conversation,
                 **extra: object) -> BuildRecord:
    """The build's record: the store's files and size, the units and their totals."""
    store = folder.store
    files = store.files()
    size = sum(store.resolve(p).host.stat().st_size for p in files)
    units = folder.state.units
    spec = folder.spec
    fields: dict[str, object] = {
        "variant": spec.variant, "conversation_id": conversation.id,
        "benchmark": conversation.benchmark, "files": files, "bytes": size,
        "builder_model": spec.model, "harness": spec.harness, "toolset": spec.toolset,
        "key": spec.key, "prompt_name": spec.prompt_name,
        "prompt_hash": spec.prompt_hash, "toolset_digest": spec.toolset_digest,
        "units": units, **unit_totals(units), **extra,
    }
    return BuildRecord.model_validate(fields)
