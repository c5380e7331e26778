"""The harness catalog: every harness names registered tool sets for every role it serves.

The catalog lives with the tools (:mod:`memdir.tools._harness`) and is read by the
study; reading it loads no tool set's dependencies.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.agents import MANAGEMENT_ROLE, SEARCH_ROLE
from memdir.builders import FOLDERING_ROLE, REORGANIZER_ROLE
from memdir.skills._roles import CURATOR_ROLE, RETRIEVER_ROLE
from memdir.study import HARNESSES, StudyConfig, load_config
from memdir.study._config import HARNESS_SPECS, HarnessSpec
from memdir.tools import HARNESS_SPECS as TOOL_HARNESS_SPECS
from memdir.tools import TOOLSET_NAMES
from memdir.tools._harness import (
    BUILDER_ROLES,
    SEARCH_ROLES,
    TOOL_BLOCKS,
    harness_prompt,
    harness_spec,
    split_prompt_name,
)

ROLES = {role.role: role for role in (SEARCH_ROLE, MANAGEMENT_ROLE, REORGANIZER_ROLE,
                                      FOLDERING_ROLE, CURATOR_ROLE, RETRIEVER_ROLE)}
"""Each role's defaults, from the setting that declares them."""


def test_the_study_reads_the_tools_catalog() -> None:
    assert HARNESS_SPECS is TOOL_HARNESS_SPECS
    assert HARNESSES == ("center", "center+bm25", "shell")
    assert all(isinstance(spec, HarnessSpec) for spec in HARNESS_SPECS.values())


@pytest.mark.parametrize("name", ["center", "center+bm25", "shell"])
def test_every_harness_names_registered_sets_for_both_roles(name: str) -> None:
    spec = harness_spec(name)
    assert set(spec.build_toolsets) == set(BUILDER_ROLES)
    for role in (*SEARCH_ROLES, *BUILDER_ROLES):
        assert role in ROLES
        assert spec.toolset_for(role) in TOOLSET_NAMES, (name, role)
    assert spec.toolsets <= set(TOOLSET_NAMES)


def test_center_is_the_roles_own_default_tools() -> None:
    center = harness_spec("center")
    for role in (*SEARCH_ROLES, *BUILDER_ROLES):
        assert center.toolset_for(role) == ROLES[role].toolset, role
    assert center.blocks == {}


def test_each_harness_gives_each_side_its_own_tools() -> None:
    bm25, shell = harness_spec("center+bm25"), harness_spec("shell")
    assert bm25.search_toolset == "bm25" and bm25.toolset_for("management") == "bm25-write"
    assert shell.search_toolset == "shell-read"
    assert {shell.toolset_for(r) for r in BUILDER_ROLES} == {"shell"}
    assert len({spec.toolset_for("management") for spec in HARNESS_SPECS.values()}) == 3
    assert len({spec.search_toolset for spec in HARNESS_SPECS.values()}) == 3


def test_harness_blocks_replace_only_tool_blocks() -> None:
    for spec in HARNESS_SPECS.values():
        assert set(spec.blocks) <= set(TOOL_BLOCKS), spec.name
        assert all(block.startswith(slot) for slot, block in spec.blocks.items())
    assert set(harness_spec("shell").blocks) == set(TOOL_BLOCKS)


def test_prompt_names_carry_the_harness() -> None:
    assert harness_prompt("search-hierarchical", "center") == "search-hierarchical"
    assert harness_prompt("search-hierarchical", "shell") == "search-hierarchical@shell"
    assert harness_prompt("search-hierarchical@shell", "center+bm25") == (
        "search-hierarchical@center+bm25")
    assert split_prompt_name("foldering@shell") == ("foldering", "shell")
    assert split_prompt_name("foldering") == ("foldering", "center")
    with pytest.raises(ValueError, match="unknown harness 'zsh'; choose one of center"):
        split_prompt_name("foldering@zsh")
    with pytest.raises(ValueError, match="does not touch a store"):
        harness_spec("shell").toolset_for("execution")


def test_reading_the_catalog_loads_no_tool_set() -> None:
    code = ("import json, sys; import memdir.tools as t; t.HARNESS_SPECS; "
            "print(json.dumps(sorted(m for m in sys.modules if m in ('bm25s', 'numpy', "
            "'memdir.tools._ranked', 'memdir.tools._shell', 'memdir.tools._sandbox'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == []


def test_the_shipped_harness_study_builds_one_store_per_harness() -> None:
    config = load_config(Path(__file__).resolve().parents[2] / "configs" / "harness-study.yaml")
    assert config.data_dir is None  # the data folder comes from MEMDIR_DATA_DIR
    cells = config.cells()
    assert len(cells) == 6  # LoCoMo and PersonaMem 128k, curated, three harnesses
    assert {c.variant for c in cells} == {"curated"}
    assert sorted(c.harness for c in cells) == sorted(HARNESSES * 2)
    assert len({c.store_key for c in cells}) == 6
    assert {c.build_harness for c in cells} == set(HARNESSES)


def test_zero_cost_stores_are_shared_by_every_harness() -> None:
    config = StudyConfig.model_validate({
        "name": "h", "benchmarks": [{"name": "locomo", "conversations": ["conv-50"]}],
        "variants": ["verbatim", "foldered"], "harnesses": list(HARNESSES),
        "search": {"models": ["memdir/grep-reader"]},
        "management": {"models": ["mockllm/model"]}})
    keys: dict[str, set[str]] = {}
    for cell in config.cells():
        keys.setdefault(cell.variant, set()).add(cell.store_key)
    assert keys["verbatim"] == {"locomo__conv-50__verbatim__none"}
    assert keys["foldered"] == {"locomo__conv-50__foldered__mockllm-model",
                                "locomo__conv-50__foldered__mockllm-model__center-bm25",
                                "locomo__conv-50__foldered__mockllm-model__shell"}
