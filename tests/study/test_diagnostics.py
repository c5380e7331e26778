"""Replaying an episode's reads, cited locators, and the sign test."""

from __future__ import annotations

import pytest

from memdir.agents import CallRecord, EpisodeRecord, ToolCallRecord, ask, resolve_citations
from memdir.store import Store
from memdir.study import (
    ReadSpan,
    cited_locators,
    episode_reads,
    recorded_reads,
    replay_reads,
    sign_test,
)
from memdir.tools import make_toolset

FILE = (
    "---\nname: session-01\ndescription: Session 1; Ana and Ben\n---\n"
    "# Session 1\n\n[S1T1] Ana: I adopted a kitten.\n[S1T2] Ben: What is its name?\n"
    "[S1T3] Ana: Miso.\n"
)


def _episode(*tool_calls: ToolCallRecord) -> EpisodeRecord:
    call = CallRecord(role="search", round=1, model="m", prompt_hash="h",
                      tool_calls=list(tool_calls), stop_reason="tool_calls", latency_s=0.0)
    return EpisodeRecord(role="search", model="m", prompt_name="p", prompt_hash="h",
                         max_rounds=3, calls=[call])


async def test_replay_recovers_what_the_agent_saw(store: Store) -> None:
    store.create("/memories/session-01.md", FILE)
    episode = _episode(
        ToolCallRecord(id="1", name="view",
                       arguments={"path": "/memories/session-01.md", "view_range": [9, 9]},
                       is_error=False),
        ToolCallRecord(id="2", name="grep", arguments={"pattern": "kitten"}, is_error=False),
        ToolCallRecord(id="3", name="view", arguments={"path": "/memories/nope.md"},
                       is_error=True),
        ToolCallRecord(id="4", name="bash", arguments={"command": "rm -rf ."}, is_error=False),
    )
    spans, seen = await replay_reads(episode, make_toolset("read", store))
    assert [(s.tool, s.path, s.start, s.end) for s in spans] == [
        ("view", "/memories/session-01.md", 9, 9), ("grep", "/memories", None, None)]
    assert seen == {"S1T3", "S1T1"}  # line 9 holds S1T3; the grep hit is S1T1
    assert await replay_reads(episode, None) == ([], set())


async def test_the_record_holds_what_a_replay_would_show(store: Store) -> None:
    store.create("/memories/session-01.md", FILE)
    answer = await ask(store, "What is the name of Ana's kitten?")
    episode = answer.records[0]
    assert episode.tool_call_count > 0
    from_record = recorded_reads(episode)
    assert from_record is not None and from_record[1]
    assert from_record == await replay_reads(episode, make_toolset("read", store))
    # Read from the record alone: the store may be gone.
    assert await episode_reads(episode, None) == from_record


async def test_records_without_results_fall_back_to_a_replay(store: Store) -> None:
    store.create("/memories/session-01.md", FILE)
    old = _episode(ToolCallRecord(id="1", name="grep", arguments={"pattern": "kitten"},
                                  is_error=False))
    assert recorded_reads(old) is None
    spans, seen = await episode_reads(old, make_toolset("read", store))
    assert seen == {"S1T1"} and [s.tool for s in spans] == ["grep"]


def test_shell_output_counts_once_it_is_recorded() -> None:
    shown = "/memories/session-01.md:9:[S1T3] Ana: Miso.\n"
    episode = _episode(
        ToolCallRecord.of("1", "bash", {"command": "grep -rn Miso /memories"}, shown, False),
        ToolCallRecord.of("2", "bash", {"command": "cat /nope"}, "Error: S9T9 gone", True),
    )
    assert recorded_reads(episode) == (
        [ReadSpan(tool="bash", path="/memories/session-01.md", query="grep -rn Miso /memories")],
        {"S1T3"})  # the read keeps the command it came from (the cell page shows it)


def test_cited_locators_come_from_resolved_citations(store: Store) -> None:
    store.create("/memories/session-01.md", FILE)
    citations = resolve_citations(store, "Miso [/memories/session-01.md:L9] [/memories/x.md]")
    assert cited_locators(citations) == {"S1T3"}


def test_sign_test_counts_wins_and_ties() -> None:
    result = sign_test({"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.5},
                       {"a": 0.0, "b": 0.0, "c": 0.0, "e": 1.0})
    assert (result.items, result.a_wins, result.b_wins, result.ties) == (3, 2, 0, 1)
    assert result.p_value == pytest.approx(0.5)
    assert sign_test({"a": 1.0}, {"a": 1.0}).p_value is None
    with pytest.raises(ValueError, match="share no question"):
        sign_test({"a": 1.0}, {"b": 1.0})
