"""Loaders for the conversational benchmarks' official file formats, and their catalog.

memdir never ships these files. Point a loader at a path, or keep them under one
data folder (``MEMDIR_DATA_DIR``) laid out as ``docs/datasets.md`` describes and
use :func:`load_benchmark`. Each loader module declares its benchmark's entry
(:class:`BenchmarkEntry`: files, loader, grading, locator form, tiers, the questions
a study cell asks); :data:`BENCHMARKS` lists them, one line each.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Final

from pydantic import AfterValidator

from memdir.bench._schema import Dataset, DatasetError
from memdir.bench.datasets._entry import BenchmarkEntry, Grading, all_questions
from memdir.bench.datasets._locomo import LOCOMO, LOCOMO_CATEGORIES, LOCOMO_DATE_FORMAT, load_locomo
from memdir.bench.datasets._personamem import (
    PERSONAMEM,
    PERSONAMEM_CATEGORIES,
    last_checkpoint,
    load_personamem,
    load_personamem_questions,
    personamem_prefix,
    terminal_questions,
)
from memdir.bench.datasets._realtalk import (
    REALTALK,
    REALTALK_CATEGORIES,
    REALTALK_DATE_FORMAT,
    load_realtalk,
)

__all__ = [
    "BENCHMARKS",
    "LOCOMO_CATEGORIES",
    "LOCOMO_DATE_FORMAT",
    "PERSONAMEM_CATEGORIES",
    "REALTALK_CATEGORIES",
    "REALTALK_DATE_FORMAT",
    "BenchmarkEntry",
    "BenchmarkName",
    "Grading",
    "all_questions",
    "benchmark_entry",
    "benchmark_paths",
    "last_checkpoint",
    "load_benchmark",
    "load_locomo",
    "load_personamem",
    "load_personamem_questions",
    "load_realtalk",
    "personamem_prefix",
    "terminal_questions",
]

BENCHMARKS: Final[Mapping[str, BenchmarkEntry]] = {
    entry.name: entry for entry in (LOCOMO, REALTALK, PERSONAMEM)
}
"""Every benchmark of the conversational study, by name."""


def benchmark_entry(name: str) -> BenchmarkEntry:
    """The catalog entry of benchmark ``name``.

    Raises:
        ValueError: No benchmark has that name; the message lists those that do.
    """
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; choose one of "
                         f"{', '.join(BENCHMARKS)}") from None


def _known(name: str) -> str:
    benchmark_entry(name)
    return name


BenchmarkName = Annotated[str, AfterValidator(_known)]
"""A benchmark's name, checked against :data:`BENCHMARKS` where a pydantic model reads it."""


def benchmark_paths(benchmark: str, data_dir: str | Path, tier: str | None = None) -> list[Path]:
    """Where a benchmark's files are expected under a data folder.

    Args:
        benchmark: Which benchmark.
        data_dir: The data folder (``MEMDIR_DATA_DIR``).
        tier: The context tier (PersonaMem's ``32k``, ``128k`` or ``1M``); the
            benchmark's default if None, ignored by a benchmark without tiers.

    Raises:
        ValueError: Unknown benchmark.
    """
    return benchmark_entry(benchmark).paths(data_dir, tier)


def load_benchmark(benchmark: str, data_dir: str | Path, tier: str | None = None) -> Dataset:
    """Load a benchmark from the standard layout of a data folder.

    Raises:
        DatasetError: A file is missing (the message names the path expected) or malformed.
        ValueError: Unknown benchmark.
    """
    entry = benchmark_entry(benchmark)
    paths = entry.paths(data_dir, tier)
    for path in paths:
        if not path.exists():
            raise DatasetError(
                path, f"not found; put the {benchmark} files there (see docs/datasets.md)"
            )
    return entry.load(paths)
