"""A cell's inputs: its conversation and questions, and the store it reads (built once).

Closed-book, chunk retrieval and the verbatim dump are rendered from the
conversation at no model cost. The foldered, reorganized and curated stores are
written by a management model; memdir has no such builder yet, so asking for one
fails the cell with :class:`BuilderUnavailable` instead of faking a store.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Mapping
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
    benchmark_paths,
    load_benchmark,
    personamem_prefix,
    terminal_questions,
)
from memdir.builders import BuildRecord, build_chunk_store, build_closed_book, build_verbatim
from memdir.metrics import measure_store
from memdir.store import Store
from memdir.study._config import BUILT_VARIANTS, Cell, StudyConfig
from memdir.study._records import StoreInfo

__all__ = ["BuilderUnavailable", "CellInput", "build_store", "cell_input", "dataset_hashes"]


class BuilderUnavailable(RuntimeError):
    """The variant's store must be written by a model-driven builder that memdir lacks."""


@dataclass(frozen=True)
class CellInput:
    """The conversation a cell's store holds and the questions asked about it."""

    conversation: Conversation
    questions: list[Question]


@lru_cache(maxsize=16)
def _dataset(benchmark: str, data_dir: Path, tier: str) -> Dataset:
    return load_benchmark(benchmark, data_dir, tier)  # type: ignore[arg-type]


def cell_input(cell: Cell, data_dir: Path) -> CellInput:
    """Load what a cell needs from the data folder.

    PersonaMem cells take the questions asked at the context's last checkpoint and
    the part of the context those questions see.

    Raises:
        memdir.bench.DatasetError: A benchmark file is missing or malformed.
        KeyError: The conversation is not in the benchmark.
    """
    dataset = _dataset(cell.benchmark, data_dir, cell.tier or "32k")
    conversation = dataset.conversation(cell.conversation)
    if cell.benchmark == "personamem":
        questions = terminal_questions(dataset, cell.conversation)
        last = max((q.end_index or 0 for q in questions), default=0)
        conversation = personamem_prefix(conversation, last)
    else:
        questions = dataset.questions_for(cell.conversation)
    if cell.limit is not None:
        questions = questions[: cell.limit]
    return CellInput(conversation, questions)


def dataset_hashes(cells: list[Cell], data_dir: Path) -> dict[str, str]:
    """SHA-256 of every benchmark file the cells read, keyed by path."""
    paths: set[Path] = set()
    for cell in cells:
        for path in benchmark_paths(cell.benchmark, data_dir, cell.tier or "32k"):
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
                      prices: PriceTable) -> tuple[Store | None, StoreInfo]:
    """Build the cell's store under ``root/<store key>``.

    Args:
        cell: The cell whose store to build.
        conversation: What the store holds.
        root: The folder that holds the study's stores.
        config: The study (chunk budget, seed, the management role's settings).
        models: Configured models to use for some model names (scripted ones in tests).
        prices: The price table for the build's cost.

    Raises:
        BuilderUnavailable: The variant needs a model-driven builder.
    """
    if cell.variant in BUILT_VARIANTS:
        raise BuilderUnavailable(
            f"the {cell.variant} store is written by a management model "
            f"({cell.builder_model}); memdir has no model-driven builder for it yet, "
            "so this cell cannot run (remove the variant or wait for the builder)"
        )
    if cell.variant == "closed-book":
        record = build_closed_book(conversation)
        return None, StoreInfo(key=cell.store_key, variant=cell.variant, path=None,
                               build=record.model_dump(mode="json"))
    folder = root / cell.store_key
    if folder.exists():
        shutil.rmtree(folder)
    store = Store(folder / "memories", create=True)
    built: BuildRecord
    if cell.variant == "chunk":
        built = build_chunk_store(conversation, store, config.chunk_tokens)
    else:
        built = build_verbatim(conversation, store)
    info = StoreInfo(key=cell.store_key, variant=cell.variant, path=str(folder / "memories"),
                     build=built.model_dump(mode="json"), profile=_profile(store, config.seed))
    return store, info


def _profile(store: Store, seed: int) -> dict[str, Any]:
    data = measure_store(store, seed=seed).shape.to_dict()
    return {k: v for k, v in data.items() if isinstance(v, int | float | str | None)}
