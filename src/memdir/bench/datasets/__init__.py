"""Loaders for the conversational benchmarks' official file formats.

memdir never ships these files. Point a loader at a path, or keep them under one
data folder (``MEMDIR_DATA_DIR``) laid out as ``docs/datasets.md`` describes and
use :func:`load_benchmark`.
"""

from __future__ import annotations

from pathlib import Path

from memdir.bench._schema import Benchmark, Dataset, DatasetError
from memdir.bench.datasets._locomo import LOCOMO_CATEGORIES, LOCOMO_DATE_FORMAT, load_locomo
from memdir.bench.datasets._personamem import (
    PERSONAMEM_CATEGORIES,
    load_personamem,
    load_personamem_questions,
    personamem_prefix,
    terminal_questions,
)
from memdir.bench.datasets._realtalk import (
    REALTALK_CATEGORIES,
    REALTALK_DATE_FORMAT,
    load_realtalk,
)

__all__ = [
    "LOCOMO_CATEGORIES",
    "LOCOMO_DATE_FORMAT",
    "PERSONAMEM_CATEGORIES",
    "REALTALK_CATEGORIES",
    "REALTALK_DATE_FORMAT",
    "benchmark_paths",
    "load_benchmark",
    "load_locomo",
    "load_personamem",
    "load_personamem_questions",
    "load_realtalk",
    "personamem_prefix",
    "terminal_questions",
]


def benchmark_paths(benchmark: Benchmark, data_dir: str | Path, tier: str = "32k") -> list[Path]:
    """Where a benchmark's files are expected under a data folder.

    Args:
        benchmark: Which benchmark.
        data_dir: The data folder (``MEMDIR_DATA_DIR``).
        tier: PersonaMem's context tier (``32k``, ``128k`` or ``1M``).
    """
    root = Path(data_dir).expanduser()
    if benchmark == "locomo":
        return [root / "locomo" / "locomo10.json"]
    if benchmark == "realtalk":
        return [root / "realtalk"]
    folder = root / "personamem"
    return [folder / f"questions_{tier}.csv", folder / f"shared_contexts_{tier}.jsonl"]


def load_benchmark(benchmark: Benchmark, data_dir: str | Path, tier: str = "32k") -> Dataset:
    """Load a benchmark from the standard layout of a data folder.

    Raises:
        DatasetError: A file is missing (the message names the path expected) or malformed.
    """
    paths = benchmark_paths(benchmark, data_dir, tier)
    for path in paths:
        if not path.exists():
            raise DatasetError(
                path, f"not found; put the {benchmark} files there (see docs/datasets.md)"
            )
    if benchmark == "locomo":
        return load_locomo(paths[0])
    if benchmark == "realtalk":
        return load_realtalk(paths[0])
    return load_personamem(paths[0], paths[1])
