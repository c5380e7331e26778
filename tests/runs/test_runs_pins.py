"""One pinning of a run's inputs, derived from what the cells use, for both settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.agents import load_prompt, prompt_fields, prompt_names, role_config
from memdir.runs import RunManifest, file_hashes, pin_inputs, prompt_hash, read_manifest
from memdir.runs import write_manifest as write_run_manifest
from memdir.skills import VARIANT_NAMES, Cell, RunConfig, list_tasks, pin_run


def test_a_prompt_with_fields_is_hashed_with_them_empty() -> None:
    assert prompt_fields("execution") == ["task", "guidance"]
    assert prompt_hash("execution") == load_prompt("execution", task="", guidance="").sha256
    assert prompt_hash("search-flat") == load_prompt("search-flat").sha256


def test_pins_name_tool_sets_by_the_set_a_factory_builds() -> None:
    from memdir.skills import GatedLibrary

    pins = pin_inputs(prompts=["curator", "curator"],
                      toolsets=["read", lambda store: GatedLibrary(store).toolset()],
                      datasets={"a": "b"})
    assert set(pins.prompt_hashes) == {"curator"}
    assert set(pins.toolset_digests) == {"read", "skills-write"}
    assert pins.datasets == {"a": "b"} and "inspect-ai" in pins.versions


@pytest.mark.parametrize("variant", VARIANT_NAMES)
@pytest.mark.parametrize("execution", ["expert", "openai/gpt-4.1"])
def test_every_skills_cell_pins_prompts_that_exist(variant: str, execution: str) -> None:
    cell = Cell(protocol="full-chain", variant=variant, execution=execution,  # type: ignore[arg-type]
                curator="openai/gpt-5.4-mini", retriever="openai/gpt-5.4-mini")
    prompts, _ = cell.inputs()
    assert set(prompts) <= set(prompt_names())
    assert (role_config("execution").prompt in prompts) == (execution != "expert")
    if variant == "curated_skills":  # the prompts the hand-kept CLI list had missed
        assert {"retriever-cite-broad", "curator-skills"} <= set(prompts)


def test_a_skills_run_pins_every_cell_input_and_the_games_it_plays(
        shared_data: Path, tmp_path: Path) -> None:
    split = shared_data / "alfworld" / "valid_seen"
    config = RunConfig(name="pins", data=split, output=tmp_path / "run", limit=2,
                       variants=["none", "curated_skills", "curated_skills_mem"],
                       executions=["expert", "openai/gpt-4.1"])
    manifest = pin_run(config, list_tasks(split))
    # a model execution agent also sends its step turn and, in a long episode, the
    # compaction note: both are pinned with its system prompt
    assert set(manifest.prompt_hashes) == {"retriever-cite-broad", "retriever-cite", "curator",
                                           "curator-skills", "turn-task", "execution",
                                           "turn-step", "turn-compact"}
    assert set(manifest.toolset_digests) == {"read", "write", "skills-write"}
    assert len(manifest.datasets) == 4  # two games and their traj_data.json
    assert manifest.cells == [c.key for c in config.cells()]
    assert read_manifest(config.output) == manifest
    data = json.loads((config.output / "manifest.json").read_text())
    assert data["version"] == 1 and "schema_version" not in data


def test_a_run_folder_refuses_another_config_when_asked(tmp_path: Path) -> None:
    write_run_manifest(tmp_path, RunManifest(config={"name": "a"}))
    with pytest.raises(ValueError, match="different config"):
        write_run_manifest(tmp_path, RunManifest(config={"name": "b"}))
    write_run_manifest(tmp_path, RunManifest(config={"name": "b"}), same_config=False)
    assert read_manifest(tmp_path) == RunManifest(config={"name": "b"})


def test_file_hashes_are_sha256_by_path(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"abc")
    assert file_hashes([tmp_path / "a"]) == {
        str(tmp_path / "a"): "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
