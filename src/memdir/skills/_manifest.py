"""A skill-setting run's manifest: its config, cells and pinned inputs.

The pins come from :func:`memdir.runs.pin_inputs`, as the study's do, over what
the run's cells actually use: each cell's prompts and tool sets
(:meth:`Cell.inputs`, derived from its variant and roles) and the ALFWorld files
of every task its chains play.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from memdir.runs import RunManifest, ToolsetFactory, file_hashes, pin_inputs, write_manifest
from memdir.skills._config import RunConfig
from memdir.skills._families import AlfworldTask
from memdir.skills._run import chains_for

__all__ = ["pin_run"]


def _played_files(config: RunConfig, tasks: Sequence[AlfworldTask]) -> list[Path]:
    files: set[Path] = set()
    for protocol in config.protocols:
        for _, chain in chains_for(protocol, tasks, config.seed, config.limit, config.task_ids):
            for task in chain:
                files.add(task.game_file)
                if (traj := task.folder / "traj_data.json").is_file():
                    files.add(traj)
    return sorted(files)


def pin_run(config: RunConfig, tasks: Sequence[AlfworldTask]) -> RunManifest:
    """Write the run's ``manifest.json`` into its output folder and return it.

    A rerun rewrites the manifest (a grid may grow between runs; each chain's own
    ``chain.json`` refuses a folder played with another order, step cap or compaction).
    """
    cells = config.cells()
    prompts: list[str] = []
    toolsets: list[str | ToolsetFactory] = []
    for cell in cells:
        cell_prompts, cell_toolsets = cell.inputs()
        prompts.extend(cell_prompts)
        toolsets.extend(cell_toolsets)
    pins = pin_inputs(prompts=prompts, toolsets=toolsets,
                      datasets=file_hashes(_played_files(config, tasks)))
    manifest = RunManifest(config=json.loads(config.model_dump_json()), seed=config.seed,
                           cells=[c.key for c in cells], **pins.model_dump())
    write_manifest(config.output, manifest, same_config=False)
    return manifest
