"""A cell's inputs: its conversation and questions, and the store it reads (built once).

Closed-book, the chunk store and the verbatim dump are rendered from the
conversation at no model cost, afresh on every run, the same under every harness.
The foldered, reorganized and curated stores are written by the cell's builder
model through the cell's harness (one store per variant and harness) by
:mod:`memdir.builders`, in a build folder keyed by their whole configuration
under the config's ``build_cache`` (default: the run's ``stores/`` folder): a
finished build is reused without a model call, an interrupted one resumes at its
last finished chunk or pass. A build that fails fails the cell with
:class:`StoreBuildFailed`.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai.model import Model

from memdir.agents import PriceTable
from memdir.bench import (
    Conversation,
    Dataset,
    Question,
    benchmark_entry,
    benchmark_paths,
    load_benchmark,
)
from memdir.builders import BuildError, BuiltVariant, build_variant, variant_spec
from memdir.metrics import measure_store
from memdir.runs import EvalFailed, eval_work
from memdir.store import Store
from memdir.store.history import HistoryError
from memdir.study._config import Cell, StudyConfig
from memdir.study._records import StoreInfo

__all__ = [
    "BuilderUnavailable",
    "CellInput",
    "StoreBuildFailed",
    "build_store",
    "cell_input",
    "dataset_hashes",
    "resolve_conversation",
]


class BuilderUnavailable(RuntimeError):
    """The cell's store cannot be built, so the cell cannot run; the message says why."""


class StoreBuildFailed(BuilderUnavailable):
    """A model-driven build failed; a rerun resumes it at its last finished chunk or pass.

    Causes: a model error that outlived its retries, or a foldering that changed a file.
    """


@dataclass(frozen=True)
class CellInput:
    """The conversation a cell's store holds and the questions asked about it."""

    conversation: Conversation
    questions: list[Question]


@lru_cache(maxsize=16)
def _dataset(benchmark: str, data_dir: Path, tier: str | None) -> Dataset:
    return load_benchmark(benchmark, data_dir, tier)


def cell_input(cell: Cell, data_dir: Path) -> CellInput:
    """Load what a cell needs from the data folder.

    The benchmark's catalog entry says which questions a cell asks and of which
    part of the conversation (PersonaMem: the questions asked at the context's last
    checkpoint, and the part of the context those questions see).

    Raises:
        memdir.bench.DatasetError: A benchmark file is missing or malformed.
        KeyError: The conversation is not in the benchmark.
    """
    dataset = _dataset(cell.benchmark, data_dir, cell.tier)
    conversation, questions = benchmark_entry(cell.benchmark).cell_questions(
        dataset, resolve_conversation(dataset, cell.conversation))
    if cell.limit is not None:
        questions = questions[: cell.limit]
    return CellInput(conversation, questions)


def resolve_conversation(dataset: Dataset, ref: str) -> str:
    """The conversation id a config names: an id as is, ``#n`` the n-th of the file.

    Raises:
        KeyError: The position is past the benchmark's last conversation.
    """
    if not ref.startswith("#"):
        return ref
    position = int(ref[1:])
    count = len(dataset.conversations)
    if not 1 <= position <= count:
        raise KeyError(f"{ref}: {dataset.source} holds {count} conversation(s); "
                       f"use #1 to #{count} or a conversation id")
    return dataset.conversations[position - 1].id


def dataset_hashes(cells: list[Cell], data_dir: Path) -> dict[str, str]:
    """SHA-256 of every benchmark file the cells read, keyed by path."""
    paths: set[Path] = set()
    for cell in cells:
        for path in benchmark_paths(cell.benchmark, data_dir, cell.tier):
            if path.is_dir():
                paths.update(p for p in path.glob("*.json"))
            elif path.exists():
                paths.add(path)
    return {str(p): _sha256(p) for p in sorted(paths)}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


async def build_store(cell: Cell, conversation: Conversation, root: Path,
                      config: StudyConfig, models: Mapping[str, Model],
                      prices: PriceTable, *, log_dir: Path | None = None
                      ) -> tuple[Store | None, StoreInfo]:
    """Build the cell's store: a zero-cost one afresh under ``root/<store key>``.

    Args:
        cell: The cell whose store to build.
        conversation: What the store holds.
        root: The folder that holds the study's stores.
        config: The study (chunk budget, seed, the management role's settings).
        models: Configured models to use for some model names (scripted ones in tests).
        prices: The price table for the build's cost.
        log_dir: If given, a model-built store is built inside an inspect_ai eval
            logged there, so ``inspect view`` shows the build's transcript.

    Raises:
        StoreBuildFailed: A model-built variant's build failed.
        BuilderUnavailable: A model-built variant has no builder model.
    """
    by_model = variant_spec(cell.variant).model_built
    folder = root / cell.store_key
    if by_model and cell.builder_model is None:
        raise BuilderUnavailable(f"the {cell.variant} store needs a builder model; add a "
                                 "'management: {models: [...]}' section to the config")
    if not by_model and folder.exists():
        shutil.rmtree(folder)
    settings = config.management
    model = models.get(cell.builder_model, cell.builder_model) if cell.builder_model else None

    def build() -> Awaitable[BuiltVariant]:
        return build_variant(
            cell.variant, conversation, store_dir=folder / "memories",
            cache=config.build_cache or root,
            model=model if by_model else None,
            max_rounds=settings.max_rounds if settings else None,
            max_tokens=settings.max_tokens if settings else None,
            effort=settings.effort if settings else None,
            chunk_tokens=config.chunk_tokens, max_passes=config.reorganize_passes,
            prices=prices, harness=cell.build_harness,
        )

    try:
        if log_dir is None or model is None or not by_model:
            built = await build()
        else:
            built = await eval_work(f"build__{cell.store_key}", model, log_dir, build,
                                    {"store": cell.store_key, "variant": cell.variant,
                                     "harness": cell.build_harness})
    except (BuildError, HistoryError, EvalFailed) as exc:
        raise StoreBuildFailed(f"building the {cell.variant} store with "
                               f"{cell.builder_model} failed: {exc}") from exc
    store, record = built.store, built.record
    if store is None:
        return None, StoreInfo(key=cell.store_key, variant=cell.variant, path=None,
                               build=record.model_dump(mode="json"))
    info = StoreInfo(key=cell.store_key, variant=cell.variant,
                     path=str(store.root if by_model else folder / "memories"),
                     build=record.model_dump(mode="json"),
                     build_usage=record.usage if by_model else None,
                     build_cost=record.cost if by_model else None,
                     profile=_profile(store, config.seed))
    return store, info


def _profile(store: Store, seed: int) -> dict[str, Any]:
    """Panel A (shape) and Panel B (taxonomy) as flat figures; their key names never clash."""
    metrics = measure_store(store, seed=seed)
    data = {**metrics.shape.to_dict(), **metrics.taxonomy.to_dict()}
    return {k: v for k, v in data.items() if isinstance(v, int | float | str | None)}
