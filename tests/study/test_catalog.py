"""The study reads the variant catalog and the harness declaration, and agrees with both.

Every variant makes cells, gets a search role whose prompt and tools come from its
catalog entry (or its harness), a cost estimate and a manifest entry naming the
prompts and tool sets its builder uses; an old variant name is refused with a hint,
by the study config and by ``memdir ask`` alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.agents import SEARCH_FAMILIES, role_config
from memdir.builders import CATALOG, MODEL_BUILT, OLD_VARIANT_NAMES, VARIANTS
from memdir.cli import app
from memdir.sample import build_sample_store
from memdir.study import (
    HARNESSES,
    ConfigError,
    StudyConfig,
    load_config,
    read_manifest,
    search_role,
    write_manifest,
)
from memdir.study._config import HARNESS_SPECS
from memdir.study._estimate import estimate_cells
from memdir.tools import TOOLSET_NAMES, harness_prompt

from .helpers import OFFLINE


def _every_variant() -> StudyConfig:
    return StudyConfig.model_validate({
        "name": "all", "benchmarks": [{"name": "locomo", "conversations": ["conv-50"]}],
        "variants": list(VARIANTS), "search": {"models": [OFFLINE]},
        "management": {"models": ["mockllm/model"]}, "harnesses": list(HARNESSES),
    })


def test_every_harness_names_a_registered_tool_set() -> None:
    assert HARNESSES == ("center", "center+bm25", "shell")
    for spec in HARNESS_SPECS.values():
        assert spec.search_toolset in TOOLSET_NAMES


def test_every_variant_makes_cells_with_the_catalogs_prompt_and_tools() -> None:
    config = _every_variant()
    cells = config.cells()
    assert {c.variant for c in cells} == set(VARIANTS)
    for cell in cells:
        spec = CATALOG[cell.variant]
        role = search_role(cell, config)
        family_prompt = SEARCH_FAMILIES[spec.search_family].prompt
        if spec.harnessed:
            assert role.prompt == harness_prompt(family_prompt, cell.harness)
            assert role.toolset == HARNESS_SPECS[cell.harness].search_toolset
        else:
            assert role.prompt == family_prompt
            assert role.toolset == spec.search_toolset and cell.harness == HARNESSES[0]
        assert (cell.builder_model is not None) == spec.model_built
    harnessed = [v for v in VARIANTS if CATALOG[v].harnessed]
    assert len(cells) == len(VARIANTS) - len(harnessed) + len(harnessed) * len(HARNESSES)


def test_every_variant_has_an_estimate_and_a_manifest_entry(tmp_path: Path) -> None:
    config = _every_variant()
    cells = config.cells()
    estimates = estimate_cells(config, None)
    assert {e.cell.variant for e in estimates} == set(VARIANTS)
    write_manifest(config, cells, tmp_path, tmp_path / "no-data")
    manifest = read_manifest(tmp_path)
    assert manifest is not None
    for name in VARIANTS:
        spec = CATALOG[name]
        assert SEARCH_FAMILIES[spec.search_family].prompt in manifest["prompt_hashes"]
        for prompt in spec.prompts.values():
            for harness in HARNESSES:
                assert harness_prompt(prompt, harness) in manifest["prompt_hashes"], (
                    name, prompt, harness)
        if spec.role is not None:
            assert role_config(spec.role).toolset in manifest["toolset_digests"], name
            for harness in HARNESSES:
                toolset = HARNESS_SPECS[harness].toolset_for(spec.role)
                assert toolset in manifest["toolset_digests"], (name, harness)
    assert {p for s in CATALOG.values() for p in s.prompts.values()} <= set(
        manifest["prompt_hashes"])
    assert len(MODEL_BUILT) == 4


@pytest.mark.parametrize("old", sorted(OLD_VARIANT_NAMES))
def test_a_config_with_an_old_variant_name_says_the_new_one(old: str, tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text("name: old\nbenchmarks: [{name: locomo, conversations: [conv-50]}]\n"
                    f"variants: [{old}]\nsearch: {{models: [{OFFLINE}]}}\n", "utf-8")
    with pytest.raises(ConfigError, match=f"the variant is now '{OLD_VARIANT_NAMES[old]}'"):
        load_config(path)


def test_an_unknown_harness_is_refused_with_the_list(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown harness 'grep'; choose one of center"):
        StudyConfig.model_validate({**_every_variant().model_dump(), "harnesses": ["grep"]})


@pytest.mark.parametrize("name", VARIANTS)
def test_ask_takes_every_study_variant(name: str, tmp_path: Path) -> None:
    store = build_sample_store(tmp_path / "store")
    result = CliRunner().invoke(app, ["ask", str(store.root), "Where does Maya work?",
                                      "--variant", name, "--max-rounds", "3"])
    assert result.exit_code in (0, 1), result.output  # 1: answered, a citation unresolved


@pytest.mark.parametrize("old", sorted(OLD_VARIANT_NAMES))
def test_ask_refuses_an_old_name_with_a_hint_naming_the_new(old: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ask", str(tmp_path), "q", "--variant", old])
    assert result.exit_code == 2
    assert f"the variant is now '{OLD_VARIANT_NAMES[old]}'" in result.output
