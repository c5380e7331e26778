"""The run manifest: everything a run depends on, pinned next to its records."""

from __future__ import annotations

import json
import platform
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from memdir.agents import load_prompt, role_config
from memdir.builders import variant_spec
from memdir.store import Store
from memdir.study._config import Cell, StudyConfig
from memdir.study._roles import search_role
from memdir.study._stores import dataset_hashes
from memdir.tools import make_toolset

__all__ = ["MANIFEST_VERSION", "read_manifest", "write_manifest"]

MANIFEST_VERSION = 1
_PACKAGES = ("memdir", "inspect-ai", "pydantic", "bm25s")


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def _builder_prompts(variant: str) -> tuple[str, ...]:
    """The builder's system prompts of a variant, in both locator forms (none if zero-cost)."""
    return tuple(sorted(set(variant_spec(variant).prompts.values())))


def _builder_toolset(variant: str) -> str | None:
    """The tool set a variant's builder role runs with (None: no model builds it)."""
    role = variant_spec(variant).role
    return None if role is None else role_config(role).toolset


def _prompt_hashes(cells: list[Cell], config: StudyConfig) -> dict[str, str]:
    """SHA-256 of each search and builder system prompt the cells may use.

    Judge and user-turn prompts take fields, so each call's own hash is in its call
    record (and a build's user-turn template hash is part of its build key).
    """
    names = {search_role(c, config).prompt for c in cells}
    for cell in cells:
        names.update(_builder_prompts(cell.variant))
    return {name: load_prompt(name).sha256 for name in sorted(names)}


def _toolset_digests(cells: list[Cell], config: StudyConfig) -> dict[str, str]:
    """Digest of every tool set the cells use (search and build): names, descriptions, schemas."""
    names = {t for c in cells if (t := search_role(c, config).toolset) is not None}
    names.update(t for c in cells if (t := _builder_toolset(c.variant)) is not None)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "memories", create=True)
        return {name: make_toolset(name, store).digest() for name in sorted(names)}


def write_manifest(config: StudyConfig, cells: list[Cell], out: Path, data_dir: Path) -> None:
    """Write ``config.yaml`` and ``manifest.json`` into the run folder.

    A manifest already there must describe the same config: a run folder never mixes
    two configurations.

    Raises:
        ValueError: The folder holds a run of a different config.
    """
    out.mkdir(parents=True, exist_ok=True)
    resolved = config.model_dump(mode="json")
    resolved["data_dir"] = str(data_dir)
    previous = read_manifest(out)
    if previous is not None and previous["config"] != resolved:
        raise ValueError(f"{out} holds a run of a different config; use another --out folder")
    manifest: dict[str, Any] = {
        "version": MANIFEST_VERSION,
        "config": resolved,
        "seed": config.seed,
        "cells": [c.key for c in cells],
        "prompt_hashes": _prompt_hashes(cells, config),
        "toolset_digests": _toolset_digests(cells, config),
        "datasets": dataset_hashes(cells, data_dir),
        "versions": _versions(),
    }
    (out / "config.yaml").write_text(yaml.safe_dump(resolved, sort_keys=False), "utf-8")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), "utf-8")


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of a run folder, or None if there is none yet."""
    path = out / "manifest.json"
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data
