"""The study configuration: what to run, on which models, and how it expands into cells.

A config names benchmarks and their conversations, memory variants, the model,
effort, output cap and round budget of each role, harnesses, and the judge. Lists
multiply: every benchmark conversation x variant x builder model x search model x
harness is one cell. The builder ladder, the searcher grid, the harness study and
the PersonaMem 32k/128k contrast are all just lists in the same file.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, field_validator

from memdir.bench import BenchmarkName, benchmark_entry
from memdir.builders import MODEL_BUILT, VariantName, variant_spec
from memdir.builders import VARIANTS as VARIANTS
from memdir.config import load_yaml_model
from memdir.conversation import DEFAULT_CHUNK_TOKENS
from memdir.study._paper import PaperCount
from memdir.tools._harness import DEFAULT_HARNESS, harness_spec
from memdir.tools._harness import HARNESS_SPECS as HARNESS_SPECS
from memdir.tools._harness import HARNESSES as HARNESSES
from memdir.tools._harness import HarnessSpec as HarnessSpec

__all__ = [
    "BUILT_VARIANTS",
    "HARNESSES",
    "HARNESS_SPECS",
    "VARIANTS",
    "BenchmarkSpec",
    "Cell",
    "ConfigError",
    "Harness",
    "HarnessSpec",
    "RoleSettings",
    "StudyConfig",
    "StudyVariant",
    "load_config",
]

StudyVariant = VariantName
"""A variant of :data:`memdir.builders.VARIANTS` (the catalog declares each one)."""
BUILT_VARIANTS: frozenset[str] = frozenset(MODEL_BUILT)
"""Variants whose store a management model writes (the others cost no model call)."""


def _known_harness(name: str) -> str:
    harness_spec(name)
    return name


Harness = Annotated[str, AfterValidator(_known_harness)]
"""A harness of :data:`HARNESSES` (declared in :mod:`memdir.tools._harness`)."""
Effort = Literal["minimal", "low", "medium", "high"]


class ConfigError(ValueError):
    """The study configuration cannot be read or does not make sense; the message says why."""


class RoleSettings(BaseModel):
    """The models of one role and how each runs (a list of models makes a ladder)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: list[str] = Field(min_length=1)
    effort: Effort | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    max_rounds: int | None = Field(default=None, ge=1)

    @field_validator("models", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class JudgeSettings(BaseModel):
    """The pinned judge; ``model: null`` grades by token F1 / exact match only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    effort: Effort | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    attribution: bool = True
    limit: int | None = Field(default=None, ge=1)
    """Judge only the first ``limit`` questions of each cell (None: all)."""


class BenchmarkSpec(BaseModel):
    """One benchmark and the conversations of it to run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: BenchmarkName
    conversations: list[str] = Field(min_length=1)
    """Conversation ids, or ``#n`` for the n-th conversation of the benchmark's file
    (1-based, file order; PersonaMem contexts in order of first question), resolved when
    the data is loaded; useful where ids are long hashes that differ between tiers."""
    tiers: list[str] = Field(default_factory=lambda: ["32k"])
    """Context tiers (PersonaMem's ``32k``, ``128k``); ignored by a benchmark without."""
    limit: int | None = Field(default=None, ge=1)
    """Answer only the first ``limit`` evaluated questions per conversation (None: all)."""

    @field_validator("conversations")
    @classmethod
    def _positions_are_numbers(cls, value: list[str]) -> list[str]:
        for ref in value:
            if ref.startswith("#") and not (ref[1:].isdigit() and int(ref[1:]) >= 1):
                raise ValueError(
                    f"conversation {ref!r}: a position is '#' and a number from 1, e.g. '#2'")
        return value

    @property
    def label_tiers(self) -> list[str | None]:
        """The tiers that make separate cells (none for a benchmark without tiers)."""
        return list(self.tiers) if benchmark_entry(self.name).tiers else [None]


class Cell(BaseModel):
    """One unit of the study: a store variant built by one model, read by another."""

    model_config = ConfigDict(frozen=True)

    benchmark: BenchmarkName
    tier: str | None
    conversation: str
    variant: StudyVariant
    builder_model: str | None
    search_model: str
    harness: Harness
    limit: int | None = None

    @property
    def build_harness(self) -> str:
        """The harness the cell's store is written through.

        A model-built store is written through the cell's harness; a zero-cost one
        (verbatim, chunk, closed-book) is the same under every harness: ``center``.
        """
        return self.harness if variant_spec(self.variant).model_built else DEFAULT_HARNESS

    @property
    def store_key(self) -> str:
        """Names the store this cell reads; cells that share it share one build.

        A store written through a harness other than center carries its name.
        """
        builder = self.builder_model if variant_spec(self.variant).model_built else "none"
        harness = "" if self.build_harness == DEFAULT_HARNESS else f"__{self.build_harness}"
        return _slug(f"{self.dataset_key}__{self.conversation}__{self.variant}__{builder}"
                     f"{harness}")

    @property
    def dataset_key(self) -> str:
        """The benchmark with its tier, e.g. ``personamem-128k``."""
        return self.benchmark if self.tier is None else f"{self.benchmark}-{self.tier}"

    @property
    def key(self) -> str:
        """A file-system-safe identifier of the cell, stable across runs."""
        return _slug(f"{self.store_key}__{self.search_model}__{self.harness}")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)


class StudyConfig(BaseModel):
    """A whole study, as written in one YAML file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    seed: int = 0
    data_dir: Path | None = Field(default=None, validation_alias=AliasChoices("data", "data_dir"))
    """Benchmark folder, written ``data:`` (``data_dir:`` is read too). ``--data`` and
    ``MEMDIR_DATA_DIR`` both take precedence; a relative path in a config file is
    relative to the file's folder (:func:`load_config`)."""
    paper: PaperCount | None = Field(default=None, exclude=True)
    """What the config reproduces of the paper and the paper's cell count (shown by the
    dry run; not part of the run, so left out of the pinned config)."""
    benchmarks: list[BenchmarkSpec] = Field(min_length=1)
    variants: list[StudyVariant] = Field(min_length=1)
    search: RoleSettings
    management: RoleSettings | None = None
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    harnesses: list[Harness] = Field(default_factory=lambda: ["center"], min_length=1)
    concurrency: int = Field(default=8, ge=1)
    chunk_tokens: int = Field(default=DEFAULT_CHUNK_TOKENS, gt=0)
    """The chunking rule's budget for the chunk store and the curated build (the same
    chunks for both); 4000 keeps sessions whole, the session-sized rule."""
    reorganize_passes: int = Field(default=5, ge=1)
    """Most passes of a reorganized build (a pass that changes nothing ends it earlier)."""
    build_cache: Path | None = None
    """Folder of model-built stores, reused across runs; None: the run's ``stores/``."""
    prices: Path | None = None

    def cells(self) -> list[Cell]:
        """Every cell, in a stable order.

        A variant whose search tool set is not the harness's (closed-book reads no
        store, chunk has its own tool) gets the first harness only; zero-cost
        variants get no builder model.

        Raises:
            ConfigError: A model-built variant is asked for without a management model.
        """
        cells: list[Cell] = []
        for bench in self.benchmarks:
            for tier, conv, variant in product(bench.label_tiers, bench.conversations,
                                               self.variants):
                builders = self._builders(variant)
                harnesses = (self.harnesses if variant_spec(variant).harnessed
                             else self.harnesses[:1])
                for builder, searcher, harness in product(builders, self.search.models,
                                                          harnesses):
                    cells.append(Cell(benchmark=bench.name, tier=tier, conversation=conv,
                                      variant=variant, builder_model=builder,
                                      search_model=searcher, harness=harness,
                                      limit=bench.limit))
        return _unique(cells)

    def _builders(self, variant: str) -> list[str | None]:
        if not variant_spec(variant).model_built:
            return [None]
        if self.management is None:
            raise ConfigError(
                f"variant {variant!r} is written by a management model; add a "
                "'management: {models: [...]}' section or drop the variant"
            )
        return list(self.management.models)


def _unique(cells: list[Cell]) -> list[Cell]:
    seen: dict[str, Cell] = {}
    for cell in cells:
        seen.setdefault(cell.key, cell)
    return list(seen.values())


def load_config(path: str | Path) -> StudyConfig:
    """Read a study config from YAML; a relative ``data:`` is taken from the file's folder.

    So ``data: ../data`` in ``configs/x.yaml`` names the same folder whichever folder
    the command runs in.

    Raises:
        ConfigError: The file is missing, not YAML, or not a valid config.
    """
    config = load_yaml_model(path, StudyConfig, "study config", ConfigError)
    if config.data_dir is None:
        return config
    data = config.data_dir.expanduser()
    if not data.is_absolute():
        data = Path(path).absolute().parent / data
    return config.model_copy(update={"data_dir": data})
