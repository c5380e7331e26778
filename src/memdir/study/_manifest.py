"""The run manifest: everything a run depends on, pinned next to its records.

The pins themselves (prompt hashes, tool-set digests, dataset hashes, versions)
are computed by :func:`memdir.runs.pin_inputs`, the same way the skill setting
pins its runs; this module only names what the study's cells use. The judge is
pinned beside them (:class:`memdir.study.JudgePin`: model, call settings and a
hash of each template it sends), and a run folder never mixes two judges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from memdir.builders import variant_spec
from memdir.runs import MANIFEST, RunManifest, pin_inputs, read_record
from memdir.runs import write_manifest as write_run_manifest
from memdir.study._config import Cell, StudyConfig
from memdir.study._grading import JudgePin, judge_pin
from memdir.study._roles import search_role
from memdir.study._stores import dataset_hashes
from memdir.tools._harness import harness_prompt, harness_spec

__all__ = ["StudyManifest", "read_manifest", "read_study_manifest", "study_prompts",
           "study_toolsets", "write_manifest"]


class StudyManifest(RunManifest):
    """A study run's manifest: the run layer's pins and the judge's."""

    judge: JudgePin | None = None
    """The judge that grades the run (None: no judge; token F1 and option match only)."""


def _builder_prompts(cell: Cell) -> tuple[str, ...]:
    """The builder's system prompts of a cell's store (none if zero-cost).

    Both locator forms, each as worded for the harness the store is written through.
    """
    prompts = variant_spec(cell.variant).prompts.values()
    return tuple(sorted({harness_prompt(p, cell.build_harness) for p in prompts}))


def _builder_toolset(cell: Cell) -> str | None:
    """The tool set a cell's store builder runs with (None: no model builds it)."""
    role = variant_spec(cell.variant).role
    return None if role is None else harness_spec(cell.build_harness).toolset_for(role)


def study_prompts(cells: list[Cell], config: StudyConfig) -> set[str]:
    """The search and builder system prompts the cells may use.

    The judge's prompts are pinned with the judge (:func:`memdir.study._grading.judge_pin`);
    user-turn prompts take fields, so each call's own hash is in its call record (and
    a build's user-turn template hash is part of its build key).
    """
    names = {search_role(c, config).prompt for c in cells}
    for cell in cells:
        names.update(_builder_prompts(cell))
    return names


def study_toolsets(cells: list[Cell], config: StudyConfig) -> set[str]:
    """Every tool set the cells use (search and build)."""
    names = {t for c in cells if (t := search_role(c, config).toolset) is not None}
    names.update(t for c in cells if (t := _builder_toolset(c)) is not None)
    return names


def write_manifest(config: StudyConfig, cells: list[Cell], out: Path, data_dir: Path) -> None:
    """Write ``config.yaml`` and ``manifest.json`` into the run folder.

    A manifest already there must describe the same config: a run folder never mixes
    two configurations.

    Raises:
        ValueError: The folder holds a run of a different config, or one judged by
            another judge (the same settings, but a template has changed since).
    """
    judge = judge_pin(config.judge)
    previous = read_study_manifest(out)
    if previous is not None and previous.judge is not None and judge is not None \
            and previous.judge.hash != judge.hash:
        raise ValueError(f"{out} was judged with other judge prompts or settings (judge hash "
                         f"{previous.judge.hash[:12]}, now {judge.hash[:12]}); re-grade it "
                         f"with `memdir study rejudge {out}` or use another --out folder")
    resolved = config.model_dump(mode="json")
    resolved["data_dir"] = str(data_dir)
    pins = pin_inputs(prompts=study_prompts(cells, config),
                      toolsets=study_toolsets(cells, config),
                      datasets=dataset_hashes(cells, data_dir))
    manifest = StudyManifest(config=resolved, seed=config.seed, cells=[c.key for c in cells],
                             judge=judge, **pins.model_dump())
    write_run_manifest(out, manifest)
    (out / "config.yaml").write_text(yaml.safe_dump(resolved, sort_keys=False), "utf-8")


def read_study_manifest(out: Path) -> StudyManifest | None:
    """The manifest of a run folder, or None if there is none yet.

    Raises:
        ValueError: The manifest is damaged.
    """
    path = out / MANIFEST
    return read_record(path, StudyManifest) if path.exists() else None


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of a run folder as JSON data, or None if there is none yet."""
    manifest = read_study_manifest(out)
    return None if manifest is None else manifest.model_dump(mode="json")
