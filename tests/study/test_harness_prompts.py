"""Prompts name the tools the harness really has, and nothing else changes between harnesses.

Every prompt of a role that touches a store is loaded under each harness: Center is
the prompt as written, Center+BM25 describes the ranked ``search`` tool, Shell
names no tool it lacks (view, grep, toc, section_read, str_replace, insert,
rename) and tells builders how to write files with frontmatter through bash.
Removing every tool block leaves the same text under every harness.
"""

from __future__ import annotations

import re

import pytest

from memdir.agents import load_prompt, prompt_fields, prompt_names
from memdir.agents._prompts import _read
from memdir.tools import HARNESS_SPECS
from memdir.tools._harness import TOOL_BLOCKS

SEARCH = ["search-hierarchical", "search-flat", "search-foldered"]
BUILD = ["management-conversation", "management-blocks", "reorganize-preserve",
         "reorganize-condense", "reorganize-preserve-blocks", "reorganize-condense-blocks"]
SKILLS = ["curator", "curator-skills", "retriever-guidance", "retriever-cite",
          "retriever-cite-broad", "retriever-episodes"]
"""The skill setting's store roles: both curators and every retriever."""
_TOOL_NAMES = re.compile(r"`(?:view|grep|toc|section_read|str_replace|insert|rename|create)"
                         r"`|view_range|\b(?:toc|section_read|str_replace)\b")


def _text(name: str) -> str:
    return load_prompt(name, **dict.fromkeys(prompt_fields(name), "x")).text


def _without_tool_blocks(name: str) -> str:
    """The prompt with every tool block's text (under its harness) cut out."""
    text = _text(name)
    harness = name.partition("@")[2] or "center"
    for slot in TOOL_BLOCKS:
        block = HARNESS_SPECS[harness].blocks.get(slot, slot)
        text = text.replace(_read(f"blocks/{block}.md").rstrip("\n"), "")
    return text


@pytest.mark.parametrize("harness", list(HARNESS_SPECS))
def test_every_tool_block_exists_under_every_harness(harness: str) -> None:
    for slot in TOOL_BLOCKS:
        block = HARNESS_SPECS[harness].blocks.get(slot, slot)
        assert _read(f"blocks/{block}.md").strip(), (harness, slot)


@pytest.mark.parametrize("name", [*SEARCH, *BUILD, "foldering", *SKILLS])
def test_a_harness_changes_only_the_tool_blocks(name: str) -> None:
    center = _without_tool_blocks(name)
    for harness in ("center+bm25", "shell"):
        assert _text(f"{name}@{harness}") != _text(name)
        assert _without_tool_blocks(f"{name}@{harness}") == center, harness


def test_center_is_the_prompt_as_written() -> None:
    for name in prompt_names():
        fields = dict.fromkeys(prompt_fields(name), "x")
        assert load_prompt(f"{name}@center", **fields).text == load_prompt(name, **fields).text


@pytest.mark.parametrize("name", [*SEARCH, *BUILD, "foldering", *SKILLS])
def test_shell_prompts_name_no_tool_the_shell_lacks(name: str) -> None:
    text = _text(f"{name}@shell")
    assert not _TOOL_NAMES.findall(text), _TOOL_NAMES.findall(text)
    assert "`bash`" in text or "grep -r" in text
    assert "/memories" in text


@pytest.mark.parametrize("name", SKILLS)
def test_the_skill_roles_describe_ranked_search_under_center_bm25(name: str) -> None:
    # Before, no curator or retriever block named a tool that Center+BM25 rewords, so
    # their Center+BM25 prompts were byte for byte Center's and never mentioned search.
    center, bm25 = _text(name), _text(f"{name}@center+bm25")
    assert "`search`" not in center and "`search`" in bm25 and "BM25" in bm25
    assert "`grep`" in center and "`grep`" in bm25


@pytest.mark.parametrize("name", SEARCH)
def test_search_prompts_describe_each_harnesss_search_tools(name: str) -> None:
    center, bm25, shell = (_text(n) for n in (name, f"{name}@center+bm25", f"{name}@shell"))
    assert "`search`" not in center and "`toc`" in center
    assert "`search` ranks whole files" in bm25 and "BM25" in bm25 and "`toc`" in bm25
    assert "read-only" in shell and "`bash`" in shell and "cat -n" in shell
    assert "numbered from 1 as `cat -n` and `grep -n` show them" in shell


@pytest.mark.parametrize("name", BUILD)
def test_shell_builders_learn_to_write_files_with_frontmatter_through_bash(name: str) -> None:
    text = _text(f"{name}@shell")
    assert "<<'EOF'" in text and "`name: alice`" in text and "`description:" in text
    assert "sed -i" in text and "`mv`" in text
    bm25 = _text(f"{name}@center+bm25")
    assert "`search`" in bm25 and "str_replace" in bm25


def test_an_unknown_harness_or_block_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown harness 'zsh'"):
        load_prompt("search-flat@zsh")
    with pytest.raises(ValueError, match="unknown prompt 'nope@shell'"):
        load_prompt("nope@shell")
