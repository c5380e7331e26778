"""Run configurations of the skill setting: a YAML file naming the grid of cells to run.

A cell is one (protocol, variant, curator, execution) combination. Variants
without a curator (``none``, ``episode_log``, ``episode_log_recent``) get one
cell per protocol and execution whatever the curator ladder holds; those with a
retriever (``episode_log`` and the curated ones) get the config's retriever.
``execution`` is ``expert`` (the offline handcoded expert) or a model name for
the execution agent.

The split folder comes from ``--data DIR`` or ``MEMDIR_DATA_DIR`` (each naming
the benchmark folder that holds ``alfworld/valid_seen``), else from the config's
``data`` (a relative path is taken from the config file's folder, never from
where the command runs). A shipped config names no folder and says in
``paper`` how many cells the paper reports for the study it reproduces.

``compaction`` sets when a model-driven execution agent compacts a long episode
(:class:`Compaction`, default 32,000 tokens, the first step and the last 10 kept);
it is part of the pinned config and each chain's ``chain.json``, so a chain
recorded under other settings is refused on resume.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from memdir.config import load_yaml_model
from memdir.runs import ToolsetFactory
from memdir.skills._execution import COMPACT_PROMPT, STEP_PROMPT, Compaction
from memdir.skills._roles import EXECUTION_ROLE
from memdir.skills._variants import (
    CURATOR_PROMPTS,
    RETRIEVER_PROMPTS,
    VariantName,
    variant_inputs,
)
from memdir.tools import DEFAULT_HARNESS, harness_spec

__all__ = ["EXPERT", "SPLIT", "Cell", "PaperCells", "Protocol", "RunConfig", "load_config"]

EXPERT = "expert"
SPLIT = Path("alfworld") / "valid_seen"
"""Where the split sits inside a benchmark folder (``--data``, ``MEMDIR_DATA_DIR``)."""
Protocol = Literal["full-chain", "three-chain"]
_DEFAULT_PROTOCOLS: tuple[Protocol, ...] = ("full-chain",)


def _slug(model: str) -> str:
    return model.rsplit("/", 1)[-1].replace(".", "_")


def _known_harness(name: str) -> str:
    harness_spec(name)
    return name


Harness = Annotated[str, AfterValidator(_known_harness)]
"""A harness of :data:`memdir.tools._harness.HARNESSES`."""


class Cell(BaseModel):
    """One cell of the grid."""

    model_config = ConfigDict(frozen=True)

    protocol: Protocol
    variant: VariantName
    execution: str
    curator: str | None = None
    retriever: str | None = None
    harness: Harness = DEFAULT_HARNESS
    """The tool sets of the curator and the retriever (a cell recorded before
    harnesses existed loads as ``center``)."""

    @property
    def key(self) -> str:
        """The cell's name and folder, e.g. ``full-chain.episode_log.exec-expert``.

        A harness other than ``center`` ends the key (``....h-shell``), so center
        cells keep the folders they had before harnesses existed.
        """
        parts: list[str] = [self.protocol, self.variant]
        if self.curator is not None:
            parts.append(f"cur-{_slug(self.curator)}")
        parts.append(f"exec-{_slug(self.execution)}")
        if self.harness != DEFAULT_HARNESS:
            parts.append(f"h-{self.harness.replace('+', '-')}")
        return ".".join(parts)

    def inputs(self) -> tuple[list[str], list[str | ToolsetFactory]]:
        """The system prompts and tool sets the cell's roles use (what a run pins).

        Derived from the variant's roles and the execution role's configuration, so
        the pinned list is the list the run calls.
        """
        prompts, toolsets = variant_inputs(self.variant, self.harness)
        if self.execution != EXPERT:  # its system prompt, step turn and compaction note
            prompts.extend([EXECUTION_ROLE.prompt, STEP_PROMPT, COMPACT_PROMPT])
        return prompts, toolsets


class PaperCells(BaseModel):
    """The paper's side of a config: where it reports the study and how many cells it ran."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cells: int = Field(ge=1)
    table: str = Field(min_length=1, description="Where the paper reports them (Table 5).")
    note: str | None = Field(default=None, description="How the count was read, or why "
                             "memdir's count differs.")


class RunConfig(BaseModel):
    """A grid of skill-setting cells and the settings they share."""

    model_config = ConfigDict(extra="forbid")

    name: str
    data: Path | None = Field(default=None, description="The valid_seen split folder; "
                              "--data and MEMDIR_DATA_DIR take precedence.")
    paper: PaperCells | None = Field(default=None, exclude=True,
                                     description="What the paper reports for this grid "
                                     "(shown by the dry run, not part of the run).")
    output: Path = Field(description="Where the run's records go.")
    protocols: list[Protocol] = Field(default_factory=lambda: list(_DEFAULT_PROTOCOLS),
                                      min_length=1)
    variants: list[VariantName] = Field(min_length=1)
    seed: int = 0
    max_steps: int = Field(default=50, ge=1)
    limit: int | None = Field(default=None, ge=1,
                              description="Play only the first N tasks of each chain.")
    task_ids: list[str] | None = Field(
        default=None, description="Play only these tasks (kept in the protocol's order).")
    curators: list[str] = Field(default_factory=lambda: ["openai/gpt-5.4-mini"], min_length=1)
    retriever: str = "openai/gpt-5.4-mini"
    executions: list[str] = Field(default_factory=lambda: [EXPERT], min_length=1)
    harnesses: list[Harness] = Field(
        default_factory=lambda: [DEFAULT_HARNESS], min_length=1,
        description="The tool sets of the curator and the retriever, one cell each "
        "(variants without a model reading the store get the first only).")
    episode_k: int = Field(default=2, ge=0,
                           description="Episodes served per task by episode_log_recent.")
    compaction: Compaction = Field(
        default_factory=Compaction,
        description="When the model-driven execution agent compacts a long episode "
        "(each chain pins it; the expert ignores it).")
    cache_dir: Path | None = Field(default=None, description="ALFWorld translation cache.")
    prices: Path | None = Field(default=None, description="A price file merged over the table.")

    def cells(self) -> list[Cell]:
        """Every cell of the grid, in config order."""
        found = []
        for protocol in self.protocols:
            for execution in self.executions:
                for variant in self.variants:
                    harnesses = (self.harnesses if variant in RETRIEVER_PROMPTS
                                 else self.harnesses[:1])
                    for harness in harnesses:
                        found.extend(self._cells(protocol, execution, variant, harness))
        return found

    def _cells(self, protocol: Protocol, execution: str, variant: VariantName,
               harness: str) -> list[Cell]:
        if variant not in CURATOR_PROMPTS:  # no curator, so no curator ladder
            retriever = self.retriever if variant in RETRIEVER_PROMPTS else None
            return [Cell(protocol=protocol, variant=variant, execution=execution,
                         retriever=retriever, harness=harness)]
        return [Cell(protocol=protocol, variant=variant, execution=execution,
                     curator=curator, retriever=self.retriever, harness=harness)
                for curator in self.curators]

    def split(self, data_dir: Path | None = None) -> Path:
        """The split folder: ``data_dir / SPLIT`` when a benchmark folder is given, else ``data``.

        Raises:
            ValueError: neither is set.
        """
        if data_dir is not None:
            return data_dir.expanduser() / SPLIT
        if self.data is None:
            raise ValueError(f"{self.name}: no data folder; pass --data DIR or set "
                             f"MEMDIR_DATA_DIR (the folder holding {SPLIT.as_posix()})")
        return self.data.expanduser()

    def models(self) -> list[str]:
        """Every model name the grid calls (empty for an offline grid)."""
        names: list[str] = []
        for cell in self.cells():
            for name in (cell.curator, cell.retriever, cell.execution):
                if name is not None and name != EXPERT and name not in names:
                    names.append(name)
        return names


def load_config(path: Path) -> RunConfig:
    """Read a run config from YAML; a relative ``data`` is taken from the file's folder.

    Raises:
        ValueError: the file is unreadable, not YAML, or does not fit :class:`RunConfig`.
    """
    config = load_yaml_model(path, RunConfig, "skills run config")
    if config.data is None or config.data.expanduser().is_absolute():
        return config
    return config.model_copy(update={"data": Path(path).absolute().parent / config.data})
