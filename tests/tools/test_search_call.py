"""``search_call`` (the ``memdir tool`` shortcut) answers as the tool set's dispatcher does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from memdir.sample import build_sample_store
from memdir.store import Store
from memdir.tools._limits import CallLimits
from memdir.tools._ranked import search_call, search_now, search_spec
from memdir.tools._spec import ToolSet

_LIMITS = CallLimits(3600.0, 160_000)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return build_sample_store(tmp_path / "sample")


def _dispatched(store: Store, arguments: dict[str, Any], limits: CallLimits) -> tuple[str, bool]:
    toolset = ToolSet("bm25", [search_spec(store)], limits=limits)
    result = asyncio.run(toolset.call("search", arguments))
    return result.content, result.is_error


@pytest.mark.parametrize("arguments", [
    {"query": "maya bristol job"},
    {"query": "maya", "k": 1},
    {"query": "maya", "k": 50, "path": "/memories"},
    {"query": "maya", "k": 3, "path": "/memories/people"},
    {"query": "zzzunseenword"},
    {"query": "the what ?!"},  # no searchable word
    {"query": "maya", "k": 0},
    {"query": "maya", "k": 51},
    {"query": "maya", "path": "/memories/nowhere"},
    {"query": "maya", "path": "/etc"},
    {"query": "maya", "path": "/memories/../.."},
    {"query": "x" * 10_000},  # an error that echoes a long input is capped alike
])
def test_a_plain_search_is_answered_as_the_dispatcher_answers_it(
        store: Store, arguments: dict[str, Any]) -> None:
    expected = _dispatched(store, arguments, _LIMITS)
    result = search_call(store, arguments, _LIMITS)
    assert result is not None
    assert (result.content, result.is_error) == expected
    assert result.content


def test_a_long_answer_is_cut_with_the_same_note(store: Store) -> None:
    limits = CallLimits(3600.0, 300)
    arguments = {"query": "maya bristol", "k": 5}
    result = search_call(store, arguments, limits)
    assert result is not None and "[cut:" in result.content
    assert (result.content, result.is_error) == _dispatched(store, arguments, limits)


@pytest.mark.parametrize("arguments", [
    {},  # no query: the argument model says what is missing
    {"k": 2},
    {"query": "maya", "k": "2"},  # the model coerces a string
    {"query": "maya", "k": True},  # a bool is not an int here
    {"query": "maya", "k": 2.0},
    {"query": 5},
    {"query": "maya", "extra": 1},
    {"query": "maya", "path": None},
    {"query": "a\udcffb"},  # a lone surrogate: argument_problem refuses it
])
def test_arguments_that_are_not_plain_are_left_to_the_dispatcher(
        store: Store, arguments: dict[str, Any]) -> None:
    assert search_call(store, arguments, _LIMITS) is None


def test_search_now_is_the_tool_text_and_raises_the_tools_errors(store: Store) -> None:
    from memdir.store import NotFoundError
    from memdir.tools._spec import ToolError

    assert search_now(store, "maya", 2) == _dispatched(store, {"query": "maya", "k": 2},
                                                       _LIMITS)[0]
    with pytest.raises(ToolError, match="between 1 and 50"):
        search_now(store, "maya", 0)
    with pytest.raises(ToolError, match="no searchable words"):
        search_now(store, "the")
    with pytest.raises(NotFoundError, match="not a folder"):
        search_now(store, "maya", path="/memories/nowhere")


def test_the_edits_since_the_last_call_are_searched(store: Store) -> None:
    first = search_call(store, {"query": "zorabelle"}, _LIMITS)
    assert first is not None and first.content.startswith("No file")
    store.create("/memories/zora.md", "---\ndescription: a new friend\n---\nZorabelle here.\n")
    again = search_call(store, {"query": "zorabelle"}, _LIMITS)
    assert again is not None and not again.is_error
    assert "1. /memories/zora.md (score" in again.content
    assert again.content == _dispatched(store, {"query": "zorabelle"}, _LIMITS)[0]


def test_a_time_limit_past_what_a_lock_can_wait_is_still_answered(store: Store) -> None:
    limits = CallLimits(1e11, 160_000)  # a valid MEMDIR_TOOL_TIME_LIMIT; the dispatcher takes it
    result = search_call(store, {"query": "maya"}, limits)
    assert result is not None and not result.is_error
    assert (result.content, result.is_error) == _dispatched(store, {"query": "maya"}, limits)
