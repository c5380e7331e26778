"""The tool loop, driven by scripted mockllm outputs (each with explicit usage)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from inspect_ai.model import ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolInfo

from memdir.agents import (
    FINAL_REQUEST,
    RESULT_CHARS,
    SCHEMA_VERSION,
    AgentError,
    EpisodeRecord,
    ToolCallRecord,
    load_prompt,
    role_config,
    run_agent,
    tool_infos,
)
from memdir.store import Store
from memdir.tools import ToolSet, make_toolset, tool_spec
from scripted import Script, calls, text, usage


def _echo_set() -> ToolSet:
    async def echo(message: str) -> str:
        """Repeat a message.

        Args:
            message: What to repeat.
        """
        return f"echo: {message}"

    return ToolSet("tiny", [tool_spec(echo, read_only=True)])


SYSTEM = load_prompt("search-hierarchical")


async def test_several_calls_in_one_turn_then_answer(store: Store) -> None:
    store.create("/memories/a.md", "---\nname: a\ndescription: A file\n---\nalpha line\n")
    script = Script([
        calls(("view", {"path": "/memories"}), ("grep", {"pattern": "alpha"}),
              u=usage(120, 15, reasoning=5)),
        text("alpha [/memories/a.md:L5]", usage(40, 8, cached=150)),
    ])
    run = await run_agent(script.model(), role_config("search"), SYSTEM, "Question: alpha?",
                          make_toolset("read", store))
    script.assert_done()
    assert run.text == "alpha [/memories/a.md:L5]"
    tool_msgs = [m for m in run.messages if isinstance(m, ChatMessageTool)]
    assert [m.function for m in tool_msgs] == ["view", "grep"]
    assert "a.md" in tool_msgs[0].text and "/memories/a.md:5: alpha line" in tool_msgs[1].text
    rec = run.record
    assert rec.schema_version == SCHEMA_VERSION
    assert rec.rounds == 2 and rec.tool_call_count == 2 and not rec.budget_exhausted
    assert [c.round for c in rec.calls] == [1, 2]
    assert rec.calls[0].tool_calls[1].name == "grep"
    assert rec.calls[0].tool_calls[1].arguments == {"pattern": "alpha"}
    # Each call keeps exactly the text the model was shown.
    assert [t.result for t in rec.calls[0].tool_calls] == [m.text for m in tool_msgs]
    assert not any(t.truncated or t.error for t in rec.calls[0].tool_calls)
    assert rec.calls[0].stop_reason == "tool_calls" and rec.calls[1].stop_reason == "stop"
    assert rec.calls[0].usage.reasoning == 5
    assert rec.usage.input == 120 + 40 + 150 and rec.usage.cached_input == 150
    assert rec.prompt_hash == SYSTEM.sha256 and len(rec.prompt_hash) == 64
    assert rec.toolset == "read" and rec.toolset_digest
    assert all(c.latency_s >= 0 for c in rec.calls) and rec.wall_s > 0
    # The record round-trips through JSON unchanged.
    assert EpisodeRecord.model_validate_json(rec.model_dump_json()) == rec


async def test_tool_errors_are_fed_back_not_raised(store: Store) -> None:
    script = Script([
        calls(("nope", {"x": 1}), ("view", {"path": "/memories/../etc/passwd"}),
              ("view", "{not json"), ("grep", {"wrong": 1})),
        text("done"),
    ])
    run = await run_agent(script.model(), role_config("search"), SYSTEM, "q",
                          make_toolset("read", store))
    script.assert_done()
    results = [m for m in run.messages if isinstance(m, ChatMessageTool)]
    assert len(results) == 4 and all(m.error is not None for m in results)
    assert "no tool named 'nope'" in results[0].text
    assert "could not be read" in results[2].text
    assert "pattern: required but missing" in results[3].text
    assert [t.is_error for t in run.record.calls[0].tool_calls] == [True] * 4
    assert [t.error for t in run.record.calls[0].tool_calls] == [m.text for m in results]
    assert run.record.tool_errors == 4
    # The second model call saw every error result.
    second_input = script.seen[1]
    assert sum(isinstance(m, ChatMessageTool) for m in second_input) == 4


def test_a_runaway_result_is_cut_in_the_record_and_flagged() -> None:
    long = ToolCallRecord.of("1", "echo", {}, "x" * (RESULT_CHARS + 10), False)
    assert long.truncated and long.result == "x" * RESULT_CHARS
    short = ToolCallRecord.of("2", "echo", {}, "fine", True)
    assert not short.truncated and short.error == "fine"


def test_records_written_before_results_were_kept_still_load() -> None:
    old = {"schema_version": 1, "role": "search", "model": "m", "prompt_name": "p",
           "prompt_hash": "h", "max_rounds": 3,
           "calls": [{"schema_version": 1, "role": "search", "round": 1, "model": "m",
                      "prompt_hash": "h", "stop_reason": "tool_calls", "latency_s": 0.1,
                      "tool_calls": [{"id": "1", "name": "grep",
                                      "arguments": {"pattern": "x"}, "is_error": True}]}]}
    record = EpisodeRecord.model_validate(old)
    call = record.calls[0].tool_calls[0]
    assert record.schema_version == 1 and call.result is None and call.error is None
    assert record.tool_errors == 1


async def test_budget_exhaustion_forces_one_final_answer() -> None:
    looping = [calls(("echo", {"message": f"m{i}"})) for i in range(3)]
    script = Script([*looping, text("final after budget", usage(300, 20))])
    role = role_config("search", max_rounds=3)
    run = await run_agent(script.model(), role, SYSTEM, "q", _echo_set())
    script.assert_done()
    rec = run.record
    assert run.text == "final after budget"
    assert rec.budget_exhausted and rec.rounds == 4
    assert [c.forced_final for c in rec.calls] == [False, False, False, True]
    last_input = script.seen[-1]
    assert isinstance(last_input[-1], ChatMessageUser) and last_input[-1].text == FINAL_REQUEST


async def test_history_only_grows_by_appending() -> None:
    script = Script([calls(("echo", {"message": "a"})), calls(("echo", {"message": "b"})),
                     text("ok")])
    await run_agent(script.model(), role_config("search"), SYSTEM, "q", _echo_set())
    for earlier, later in zip(script.seen, script.seen[1:], strict=False):
        assert len(later) > len(earlier)
        assert [m.model_dump() for m in later[: len(earlier)]] == \
            [m.model_dump() for m in earlier]


async def test_tool_calls_after_the_budget_are_ignored() -> None:
    script = Script([calls(("echo", {"message": "a"})), calls(("echo", {"message": "b"}))])
    run = await run_agent(script.model(), role_config("search", max_rounds=1), SYSTEM, "q",
                          _echo_set())
    assert run.record.budget_exhausted and run.record.calls[-1].tool_calls == []


async def test_model_error_raises_agent_error_with_partial_record() -> None:
    script = Script([calls(("echo", {"message": "a"})), RuntimeError("provider down")])
    with pytest.raises(AgentError, match="provider down") as info:
        await run_agent(script.model(), role_config("search"), SYSTEM, "q", _echo_set())
    assert info.value.record.rounds == 1
    assert "provider down" in (info.value.record.error or "")


async def test_role_settings_reach_generate() -> None:
    seen: list[Any] = []

    def spy(input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        seen.append((config, tools))
        return text("hi")

    from inspect_ai.model import get_model

    role = role_config("search", toolset=None, temperature=0.0, max_tokens=123)
    await run_agent(get_model("mockllm/model", custom_outputs=spy), role,
                    load_prompt("search-closed-book"), "q")
    config, tools = seen[0]
    assert config.max_tokens == 123 and config.temperature == 0.0 and tools == []


async def test_an_empty_response_is_a_clear_error() -> None:
    from inspect_ai.model import ModelOutput

    empty = ModelOutput(model="mockllm/model", choices=[], error="overloaded")
    empty.usage = usage()
    script = Script([empty])
    with pytest.raises(AgentError, match="returned nothing.*overloaded"):
        await run_agent(script.model(), role_config("search"), SYSTEM, "q", _echo_set())


def test_tool_declarations_copy_deeply_and_serialise_like_plain_tool_infos(store: Store) -> None:
    tools = make_toolset("read", store)
    infos = tool_infos(tools)
    plain = [ToolInfo.model_validate(i.model_dump(exclude_unset=True)) for i in infos]
    assert type(plain[0]) is ToolInfo and type(infos[0]) is not ToolInfo
    assert [i.model_dump_json() for i in infos] == [p.model_dump_json() for p in plain]
    view = next(i for i in infos if i.name == "view")
    copied = view.model_copy(deep=True)
    assert copied == view and type(copied) is type(view)
    assert copied.parameters is not view.parameters
    assert copied.model_fields_set == view.model_fields_set
    assert copied.parameters.properties["path"] is not view.parameters.properties["path"]
    copied.parameters.properties["path"].description = "changed"
    copied.parameters.required.append("view_range")
    assert view.parameters.properties["path"].description != "changed"
    assert view.parameters.required == ["path"]


async def test_cached_declarations_record_each_tool_sets_own_digest(store: Store) -> None:
    other = Store(store.root.parent / "other", create=True)
    script = Script([text("one"), text("two")])
    model = script.model()
    first = await run_agent(model, role_config("search"), SYSTEM, "q", make_toolset("read", store))
    second = await run_agent(model, role_config("search"), SYSTEM, "q", make_toolset("read", other))
    script.assert_done()
    assert first.record.toolset_digest == make_toolset("read", other).digest()
    assert second.record.toolset_digest == first.record.toolset_digest
    third = await run_agent(Script([text("three")]).model(), role_config("search"), SYSTEM, "q",
                            make_toolset("write", store))
    assert third.record.toolset_digest == make_toolset("write", other).digest()
    assert third.record.toolset_digest != first.record.toolset_digest


def test_a_declaration_listed_twice_is_copied_once(store: Store) -> None:
    view = tool_infos(make_toolset("read", store))[0]
    pair = copy.deepcopy([view, view])
    assert pair[0] is pair[1] and pair[0] is not view and pair[0] == view
