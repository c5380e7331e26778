"""Pinning a run's inputs: prompts, tool descriptions, data files and code versions.

Both the study (``manifest.json``) and the skill setting pin what a run depends
on with :func:`pin_inputs`, from the names its cells actually use (each setting
derives those from its own declarations), so a pinned list can never drift from
what the run calls. A prompt that takes fields is hashed with every field empty:
the hash then changes exactly when the prompt's own text does.
"""

from __future__ import annotations

import hashlib
import platform
import tempfile
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from memdir.agents import load_prompt, prompt_fields
from memdir.runs._records import RunRecord, read_record, write_record
from memdir.store import Store
from memdir.tools import ToolSet, make_toolset

__all__ = [
    "MANIFEST",
    "MANIFEST_VERSION",
    "PACKAGES",
    "RunManifest",
    "RunPins",
    "ToolsetFactory",
    "file_hashes",
    "package_versions",
    "pin_inputs",
    "prompt_hash",
    "read_manifest",
    "write_manifest",
]

PACKAGES = ("memdir", "inspect-ai", "pydantic", "bm25s")
"""Packages whose installed version a run pins (with the Python version)."""

ToolsetFactory = Callable[[Store], ToolSet]
"""Builds a tool set over a store (a named set, or one a setting assembles itself)."""


class RunPins(BaseModel):
    """What a run depends on, as hashes and versions."""

    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    """SHA-256 of each system prompt the run's cells may use (fields left empty)."""
    toolset_digests: dict[str, str] = Field(default_factory=dict)
    """Digest of each tool set's names, descriptions and schemas."""
    datasets: dict[str, str] = Field(default_factory=dict)
    """SHA-256 of each data file the run reads, keyed by path."""
    versions: dict[str, str] = Field(default_factory=dict)
    """Python and package versions."""


def package_versions() -> dict[str, str]:
    """The Python version and each of :data:`PACKAGES`' installed versions."""
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def prompt_hash(name: str) -> str:
    """SHA-256 of prompt ``name`` with its fields (if any) left empty.

    Raises:
        ValueError: No prompt of that name ships with memdir.
    """
    return load_prompt(name, **dict.fromkeys(prompt_fields(name), "")).sha256


def file_hashes(paths: Iterable[Path]) -> dict[str, str]:
    """SHA-256 of each file, keyed by its path, in path order."""
    found = {}
    for path in sorted(set(paths)):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        found[str(path)] = digest.hexdigest()
    return found


def _toolset_digests(toolsets: Iterable[str | ToolsetFactory]) -> dict[str, str]:
    wanted = list(toolsets)
    if not wanted:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "memories", create=True)
        built = [make_toolset(t, store) if isinstance(t, str) else t(store) for t in wanted]
        return {t.name: t.digest() for t in sorted(built, key=lambda t: t.name)}


def pin_inputs(*, prompts: Iterable[str], toolsets: Iterable[str | ToolsetFactory],
               datasets: Mapping[str, str] | None = None) -> RunPins:
    """Pin a run's inputs.

    Args:
        prompts: Names of the system prompts the run's cells use.
        toolsets: The tool sets they use: a registered set's name, or a factory of a
            set a setting assembles itself (pinned under the built set's name).
        datasets: Hashes of the data files the run reads (see :func:`file_hashes`).

    Raises:
        ValueError: A prompt or tool set name is unknown.
    """
    return RunPins(prompt_hashes={name: prompt_hash(name) for name in sorted(set(prompts))},
                   toolset_digests=_toolset_digests(toolsets),
                   datasets=dict(datasets or {}), versions=package_versions())


MANIFEST_VERSION = 1
MANIFEST = "manifest.json"


class RunManifest(RunPins, RunRecord):
    """A run folder's ``manifest.json``: its config, its cells, and its pinned inputs."""

    version: int = MANIFEST_VERSION
    config: dict[str, Any]
    """The run's config as JSON, paths resolved."""
    seed: int = 0
    cells: list[str] = Field(default_factory=list)
    """Every cell's key, in run order."""


def read_manifest(folder: Path) -> RunManifest | None:
    """The manifest of a run folder, or None if there is none yet.

    Raises:
        ValueError: The manifest is damaged.
    """
    path = folder / MANIFEST
    return read_record(path, RunManifest) if path.exists() else None


def write_manifest(folder: Path, manifest: RunManifest, *, same_config: bool = True) -> None:
    """Write ``manifest.json`` into the run folder (atomically).

    Args:
        folder: The run folder (created if missing).
        manifest: What to pin.
        same_config: Refuse a folder whose manifest pins another config, so one
            folder never mixes two configurations.

    Raises:
        ValueError: ``same_config`` and the folder holds a run of a different config.
    """
    previous = read_manifest(folder)
    if same_config and previous is not None and previous.config != manifest.config:
        raise ValueError(f"{folder} holds a run of a different config; use another --out folder")
    write_record(folder / MANIFEST, manifest)
