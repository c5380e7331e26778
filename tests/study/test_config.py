"""Study configs: each kind of study the paper runs expands into the right cells."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from memdir.study import Cell, ConfigError, StudyConfig, cell_input, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _config(**changes: object) -> StudyConfig:
    base: dict[str, object] = {
        "name": "t",
        "benchmarks": [{"name": "locomo", "conversations": ["conv-50"]}],
        "variants": ["verbatim"],
        "search": {"models": "openai/gpt-5.4-mini"},
    }
    base.update(changes)
    return StudyConfig.model_validate(base)


def test_main_grid_is_every_variant_on_every_test_set() -> None:
    config = load_config(CONFIGS / "main-grid.yaml")
    cells = config.cells()
    # LoCoMo, REALTALK, three PersonaMem 32k contexts and one 128k context x 7 variants,
    # one model in every role.
    assert len(cells) == 6 * 7
    assert {c.dataset_key for c in cells} == {"locomo", "realtalk", "personamem-32k",
                                              "personamem-128k"}
    assert {c.search_model for c in cells} == {"openai/gpt-5.4-mini"}
    assert {c.builder_model for c in cells} == {None, "openai/gpt-5.4-mini"}
    assert config.judge.model == "openai/gpt-5.4-mini"


def test_offline_smoke_config() -> None:
    cells = load_config(CONFIGS / "offline-smoke.yaml").cells()
    assert [(c.dataset_key, c.variant) for c in cells] == [
        ("locomo", "closed-book"), ("locomo", "chunk"), ("locomo", "verbatim"),
        ("realtalk", "closed-book"), ("realtalk", "chunk"), ("realtalk", "verbatim")]
    assert {c.search_model for c in cells} == {"memdir/grep-reader"}


def test_builder_ladder_varies_only_the_management_model() -> None:
    ladder = ["openai/gpt-5.4-nano", "openai/gpt-5.4-mini", "openai/gpt-5.4"]
    cells = _config(variants=["curated", "verbatim"], management={"models": ladder}).cells()
    curated = [c for c in cells if c.variant == "curated"]
    assert [c.builder_model for c in curated] == ladder
    assert len({c.store_key for c in curated}) == 3
    # a zero-cost store is built once, whatever the ladder
    assert [c.builder_model for c in cells if c.variant == "verbatim"] == [None]


def test_searcher_grid_reads_each_store_with_each_model() -> None:
    searchers = ["openai/gpt-5.4-nano", "openai/gpt-5.4-mini", "openai/gpt-5.4"]
    cells = _config(variants=["verbatim", "foldered"], search={"models": searchers},
                    management={"models": ["openai/gpt-5.4-mini"]}).cells()
    assert len(cells) == 2 * 3
    by_store: dict[str, set[str]] = {}
    for c in cells:
        by_store.setdefault(c.store_key, set()).add(c.search_model)
    assert all(models == set(searchers) for models in by_store.values())
    assert len(by_store) == 2


def test_harness_study_gives_browsed_stores_every_harness() -> None:
    cells = _config(variants=["closed-book", "chunk", "verbatim"],
                    harnesses=["center", "center+bm25", "shell"]).cells()
    harness = {c.variant: sorted(x.harness for x in cells if x.variant == c.variant)
               for c in cells}
    assert harness["verbatim"] == ["center", "center+bm25", "shell"]
    # closed-book reads no store and chunk retrieval has its own tool: one harness each
    assert harness["closed-book"] == ["center"] and harness["chunk"] == ["center"]


def test_scale_contrast_makes_one_cell_per_tier() -> None:
    cells = _config(benchmarks=[{"name": "personamem", "conversations": ["ctx"],
                                 "tiers": ["32k", "128k"]}]).cells()
    assert [c.dataset_key for c in cells] == ["personamem-32k", "personamem-128k"]
    assert cells[0].store_key != cells[1].store_key


def test_cell_keys_are_unique_and_path_safe() -> None:
    cells = load_config(CONFIGS / "main-grid.yaml").cells()
    keys = [c.key for c in cells]
    assert len(set(keys)) == len(keys)
    assert all("/" not in k and "+" not in k for k in keys)
    assert Cell.model_validate(cells[0].model_dump()) == cells[0]


def test_model_built_variant_needs_a_management_model() -> None:
    with pytest.raises(ConfigError, match="management"):
        _config(variants=["foldered"]).cells()


def test_bad_files_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nvariants: [telepathy]\n")
    with pytest.raises(ConfigError, match="variants"):
        load_config(bad)
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)


def test_the_config_in_the_docs_is_valid() -> None:
    doc = (CONFIGS.parent / "docs" / "study.md").read_text()
    [block] = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    config = StudyConfig.model_validate(yaml.safe_load(block))
    cells = config.cells()
    # locomo conv-50 and a PersonaMem context at two tiers, three variants each
    assert len(cells) == 3 * 3


def test_a_conversation_position_must_be_a_number_from_one() -> None:
    for bad in ["#", "#0", "#two"]:
        with pytest.raises(ValueError, match="a position is '#' and a number"):
            _config(benchmarks=[{"name": "personamem", "conversations": [bad]}])


def test_positions_resolve_to_the_files_conversations_in_order() -> None:
    fixtures = Path(__file__).resolve().parents[1] / "bench" / "fixtures"
    cell = Cell(benchmark="personamem", tier="fixture", conversation="#1", variant="verbatim",
                builder_model=None, search_model="memdir/grep-reader", harness="center")
    inputs = cell_input(cell, fixtures)
    assert re.fullmatch(r"[0-9a-f]{64}", inputs.conversation.id)
    assert inputs.questions and {q.conversation_id for q in inputs.questions} == {
        inputs.conversation.id}
    by_id = cell_input(cell.model_copy(update={"conversation": inputs.conversation.id}),
                       fixtures)
    assert by_id.questions == inputs.questions
    second = cell_input(cell.model_copy(update={"conversation": "#2"}), fixtures)
    assert second.conversation.id != inputs.conversation.id
    with pytest.raises(KeyError, match="use #1 to #2 or a conversation id"):
        cell_input(cell.model_copy(update={"conversation": "#3"}), fixtures)



def test_main_grid_names_three_32k_contexts_and_the_first_128k_one() -> None:
    cells = load_config(CONFIGS / "main-grid.yaml").cells()
    personamem = {(c.tier, c.conversation) for c in cells if c.benchmark == "personamem"}
    tier32 = {conv for tier, conv in personamem if tier == "32k"}
    assert len(tier32) == 3 and all(len(c) == 64 for c in tier32)  # shared_context_ids
    assert {conv for tier, conv in personamem if tier == "128k"} == {"#1"}
