"""Prompts: package data built from shared blocks, hashed, filled."""

from __future__ import annotations

import hashlib

import pytest

from memdir.agents import (
    MANAGEMENT_ROLE,
    SEARCH_ROLE,
    declared_roles,
    load_prompt,
    prompt_blocks,
    prompt_names,
    role_config,
)
from memdir.builders import BUILDER_ROLES
from memdir.skills._roles import CURATOR_ROLE, EXECUTION_ROLE, RETRIEVER_ROLE

SEARCH = ["search-hierarchical", "search-foldered", "search-flat", "search-chunk"]


def test_every_prompt_loads_and_hashes_its_final_text() -> None:
    fields = {
        "execution": {"task": "t", "guidance": "g"},
        "judge-correctness": {"question": "q", "gold": "g", "answer": "a"},
        "judge-attribution": {"question": "q", "answer": "a", "cited": "c"},
        "turn-chunk": {"label": "l", "chunk": "c"},
        "turn-question": {"question": "q"},
        "turn-task": {"task": "t"},
        "turn-task-guidance": {"task": "t"},
        "turn-step": {"counter": "", "observation": "o", "admissible": "a"},
        "turn-compact": {"first": "1", "last": "3", "steps": "- step 1: look"},
        "turn-foldering": {"count": "3"},
        "turn-reorganize": {"number": "1", "total": "5"},
    }
    for name in prompt_names():
        prompt = load_prompt(name, **fields.get(name, {}))
        assert prompt.sha256 == hashlib.sha256(prompt.text.encode()).hexdigest()
        assert "{{" not in prompt.text, name
        assert len(prompt.text) > 20


def test_search_variants_share_every_block_but_the_store_form() -> None:
    # Chunk retrieval also gets its own method (retrieval steps, not routing by the tree)
    # and, as in the paper, neither the cost model nor the absence check of the tree.
    blocks = {name: prompt_blocks(name) for name in SEARCH}
    for name, used in blocks.items():
        variant = name.removeprefix("search-")
        if variant == "chunk":
            assert used == ["search-intro", "store-chunk", "search-method-chunk",
                            "multiple-choice", "citations", "answer", "budget"]
        else:
            assert used == ["search-intro", f"store-{variant}", "cost-search", "search-method",
                            "absence", "multiple-choice", "citations", "answer", "budget"]
    chunk = load_prompt("search-chunk").text
    assert "descriptions" not in chunk.split("## How to search")[1].split("##")[0]
    assert len({load_prompt(n).sha256 for n in SEARCH}) == len(SEARCH)
    assert "answer" in prompt_blocks("search-closed-book")


def test_management_variants_differ_only_in_the_locator_block() -> None:
    a = prompt_blocks("management-conversation")
    b = prompt_blocks("management-blocks")
    assert [x for x in a if x != "locator-sessions"] == [x for x in b if x != "locator-blocks"]
    assert "[S5T3]" in load_prompt("management-conversation").text
    assert "[B4M7]" in load_prompt("management-blocks").text


@pytest.mark.parametrize("suffix", ["", "-blocks"])
def test_reorganizers_differ_by_exactly_one_rule(suffix: str) -> None:
    # The paper: the condense version is the preserve one with its keep-every-fact
    # rule replaced by a keep-what-matters paragraph, and nothing else changed.
    preserve = prompt_blocks("reorganize-preserve" + suffix)
    condense = prompt_blocks("reorganize-condense" + suffix)
    differing = [(a, b) for a, b in zip(preserve, condense, strict=True) if a != b]
    assert differing == [("keep-every-fact", "keep-what-matters")]
    assert "Keep every fact" in load_prompt("reorganize-preserve" + suffix).text
    assert "Keep every fact" not in load_prompt("reorganize-condense" + suffix).text
    assert "Keep what matters" in load_prompt("reorganize-condense" + suffix).text


@pytest.mark.parametrize("rule", ["preserve", "condense"])
def test_reorganizer_locator_variants_differ_only_in_the_locator_block(rule: str) -> None:
    sessions = prompt_blocks(f"reorganize-{rule}")
    blocks = prompt_blocks(f"reorganize-{rule}-blocks")
    differing = [(a, b) for a, b in zip(sessions, blocks, strict=True) if a != b]
    assert differing == [("reorganize-locators-sessions", "reorganize-locators-blocks")]
    sessions_text = load_prompt(f"reorganize-{rule}").text
    blocks_text = load_prompt(f"reorganize-{rule}-blocks").text
    assert "[S5T3]" in sessions_text and "[B4M7]" not in sessions_text
    assert "[B4M7]" in blocks_text and "[S5T3]" not in blocks_text


def test_fields_are_checked_and_values_are_not_reexpanded() -> None:
    with pytest.raises(ValueError, match="missing"):
        load_prompt("turn-question")
    with pytest.raises(ValueError, match="unexpected"):
        load_prompt("turn-question", question="q", extra="x")
    with pytest.raises(ValueError, match="unknown prompt"):
        load_prompt("nope")
    p = load_prompt("turn-question", question="what is {{question}}?")
    assert "what is {{question}}?" in p.text


def test_every_role_names_a_real_prompt_and_is_found_by_name() -> None:
    roles = [SEARCH_ROLE, MANAGEMENT_ROLE, *BUILDER_ROLES.values(), CURATOR_ROLE, RETRIEVER_ROLE,
             EXECUTION_ROLE]
    assert set(declared_roles()) == {r.role for r in roles}
    for role in roles:
        assert role.prompt in prompt_names()
        assert role_config(role.role) == role
    with pytest.raises(ValueError, match="unknown role 'judge'"):
        role_config("judge")


def test_citing_retrievers_differ_in_the_serving_bar_and_the_entry_kinds() -> None:
    # Curated skills (broad) keeps skills only; Curated skills+mem (strict) skills and notes.
    strict = prompt_blocks("retriever-cite")
    broad = prompt_blocks("retriever-cite-broad")
    assert len(strict) == len(broad)
    differing = [(a, b) for a, b in zip(strict, broad, strict=True) if a != b]
    assert differing == [("library", "library-skills"), ("serve-strict", "serve-broad")]
    strict_text = load_prompt("retriever-cite").text
    broad_text = load_prompt("retriever-cite-broad").text
    assert "clearly apply" in strict_text and "clearly apply" not in broad_text
    assert "may help" in broad_text and "may help" not in strict_text


def test_the_ungated_curator_says_nothing_of_a_gate_or_notes() -> None:
    gated = load_prompt("curator").text
    plain = load_prompt("curator-skills").text
    assert "Outcome gate" in gated and "type: note" in gated
    assert "gate" not in plain.lower() and "note" not in plain.lower()
    assert "outcome-gate" not in prompt_blocks("curator-skills")
