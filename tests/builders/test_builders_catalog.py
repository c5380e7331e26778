"""Every consumer of the variant catalog agrees with it, so a variant cannot be half-added.

A new catalog entry without a builder, a search prompt, a role, a prompt per locator
form, a user-turn template that fills, or a manifest entry fails here; so does an old
variant name that loads without a hint.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import memdir.builders as builders
from memdir.agents import SEARCH_FAMILIES, SEARCH_VARIANTS, load_prompt
from memdir.builders import (
    BUILDER_ROLES,
    BUILDERS,
    CATALOG,
    HARNESS,
    MODEL_BUILT,
    OLD_VARIANT_NAMES,
    VARIANTS,
    build_variant,
    variant_spec,
)
from memdir.builders._key import source_hash, turn_hash
from memdir.sample import load_sample_conversation
from memdir.tools import TOOLSET_NAMES


def test_the_study_names_are_the_catalog() -> None:
    assert VARIANTS == ("closed-book", "chunk", "verbatim", "foldered",
                        "reorganized-preserve", "reorganized-condense", "curated")
    assert MODEL_BUILT == tuple(v for v in VARIANTS if CATALOG[v].model_built)


def test_every_variant_has_a_builder_through_the_one_dispatcher() -> None:
    assert set(BUILDERS) == set(VARIANTS)


@pytest.mark.parametrize("name", VARIANTS)
def test_every_variant_is_searched_by_a_family_whose_prompt_exists(name: str) -> None:
    spec = CATALOG[name]
    assert spec.search_family in SEARCH_FAMILIES
    family = SEARCH_FAMILIES[spec.search_family]
    assert load_prompt(family.prompt).text
    if spec.search_toolset == HARNESS:
        assert spec.needs_store and family.toolset is not None
    else:
        assert spec.search_toolset == family.toolset  # what `memdir ask` gives it
    tools = family.toolset if spec.search_toolset == HARNESS else spec.search_toolset
    assert (tools is not None) == spec.needs_store
    assert tools is None or tools in TOOLSET_NAMES


def test_the_family_literal_and_the_family_table_agree() -> None:
    assert tuple(SEARCH_FAMILIES) == SEARCH_VARIANTS


@pytest.mark.parametrize("name", MODEL_BUILT)
def test_every_model_built_variant_has_a_role_prompts_and_a_turn(name: str) -> None:
    spec = CATALOG[name]
    assert spec.role in BUILDER_ROLES
    assert set(spec.prompts) == {"session", "block"}
    for prompt in spec.prompts.values():
        assert load_prompt(prompt).text
    assert BUILDER_ROLES[spec.role].toolset in TOOLSET_NAMES
    assert spec.turn is not None and spec.source in ("dump", "chunks")
    filled = load_prompt(spec.turn.prompt, **{f: f"<{f}>" for f in spec.turn.fields})
    assert all(f"<{f}>" in filled.text for f in spec.turn.fields)
    conversation = load_sample_conversation()
    assert len(source_hash(name, conversation, 4000)) == 64
    assert len(turn_hash(name)) == 64
    role = builders.builder_role(name, conversation)
    assert role.role == spec.role and role.prompt == spec.prompts["session"]


@pytest.mark.parametrize("name", [v for v in VARIANTS if v not in MODEL_BUILT])
def test_a_zero_cost_variant_has_no_builder_role(name: str) -> None:
    spec = CATALOG[name]
    assert spec.role is None and spec.turn is None and spec.source == "none"
    with pytest.raises(ValueError, match="not a model-built variant"):
        builders.builder_role(name, load_sample_conversation())


@pytest.mark.parametrize("name", ["closed-book", "chunk", "verbatim"])
def test_the_dispatcher_builds_the_zero_cost_variants(name: str, tmp_path: Path) -> None:
    conversation = load_sample_conversation()
    built = asyncio.run(build_variant(name, conversation, store_dir=tmp_path / "memories",
                                      cache=tmp_path / "cache"))
    assert built.record.variant == name and built.built is None
    assert (built.store is None) == (not CATALOG[name].needs_store)
    if built.store is not None:
        assert built.store.files() == built.record.files and built.record.files


def test_a_model_built_variant_without_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="give a builder model"):
        asyncio.run(build_variant("curated", load_sample_conversation(),
                                  store_dir=tmp_path / "m", cache=tmp_path / "cache"))


@pytest.mark.parametrize("old", sorted(OLD_VARIANT_NAMES))
def test_an_old_name_is_refused_with_the_new_name(old: str) -> None:
    new = OLD_VARIANT_NAMES[old]
    assert new in CATALOG and old not in CATALOG
    with pytest.raises(ValueError, match=f"the variant is now '{new}'"):
        variant_spec(old)


def test_the_catalog_loads_without_the_builders() -> None:
    """``memdir ask --help`` lists the variants without loading inspect_ai."""
    import subprocess
    import sys

    code = ("import sys, memdir.builders as b; b.VARIANTS; "
            "print(any(m.startswith('inspect_ai') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def test_every_public_builder_name_resolves() -> None:
    for name in builders.__all__:
        assert getattr(builders, name) is not None, name
