"""The one tool loop every role runs.

A round is one ``generate`` call: the model sees the whole history and either
calls tools (each call executed through :meth:`ToolSet.call`, its result
appended as a tool message) or answers. When the round budget is spent the
model is asked once, without tools, for its final answer.

The history only ever grows by appending: no earlier message is rewritten,
trimmed or summarised, so the prefix a provider cached on one round is still a
prefix on the next (see docs/agents.md).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
)
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParams

from memdir.agents._calls import CallFailed, call_model
from memdir.agents._models import resolve_model
from memdir.agents._profiles import is_policy
from memdir.agents._prompts import Prompt
from memdir.agents._records import CallRecord, EpisodeRecord, ToolCallRecord
from memdir.agents._roles import RoleConfig
from memdir.agents._usage import usage_from_inspect
from memdir.tools import ToolResult, ToolSet

__all__ = ["FINAL_REQUEST", "AgentError", "AgentRun", "run_agent", "tool_infos"]

FINAL_REQUEST = (
    "You have used all the tool rounds this task allows, so no further tool calls "
    "will run. Reply now with your final answer, using only what you have already "
    "found; keep the citations for what you found."
)


class AgentError(RuntimeError):
    """A model call failed after inspect_ai's retries; the partial record is attached."""

    def __init__(self, message: str, record: EpisodeRecord) -> None:
        super().__init__(message)
        self.record = record


@dataclass
class AgentRun:
    """The outcome of one episode: the final text, its record and the full history."""

    text: str
    record: EpisodeRecord
    messages: list[ChatMessage] = field(default_factory=list)


class _Declaration(ToolInfo):
    """A tool declaration that inspect_ai can deep-copy cheaply.

    inspect_ai deep-copies the tool declarations twice on every ``generate``
    call (so hooks and providers can edit their copy). pydantic's generic deep
    copy walks every field of every nested schema object and was the largest
    single cost of a call; rebuilding the declaration from its own dump gives
    an equal, fully independent copy about four times faster. The copy is a
    ``_Declaration`` too, so later copies stay cheap; it serialises exactly
    like a plain :class:`ToolInfo`.
    """

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> _Declaration:
        copied = type(self).model_validate(self.model_dump(exclude_unset=True))
        if memo is not None:
            memo[id(self)] = copied  # copied once even if it appears twice
        return copied


def _build_infos(tools: ToolSet) -> list[ToolInfo]:
    return [
        _Declaration(
            name=info["name"],
            description=info["description"],
            parameters=ToolParams.model_validate(info["parameters"]),
        )
        for info in tools.infos()
    ]


def tool_infos(tools: ToolSet | None) -> list[ToolInfo]:
    """The tool set's declarations as inspect_ai :class:`ToolInfo` objects (new ones)."""
    return [] if tools is None else _build_infos(tools)


_CacheKey = tuple[tuple[str, str, int], ...]
_DECLARED: dict[_CacheKey, tuple[list[ToolInfo], str, list[object]]] = {}
_DECLARED_MAX = 256


def _declarations(tools: ToolSet | None) -> tuple[list[ToolInfo], str | None]:
    """The declarations and digest of ``tools``, built once per distinct tool set.

    Tool sets are rebuilt for every question from the same specs (whose schema
    dicts are shared, see :func:`memdir.tools.tool_spec`), so the key is each
    tool's name, description and schema object; the entry holds the schemas,
    so their ids cannot be reused while it lives. The declarations are shared
    between episodes: inspect_ai copies them before any use.
    """
    if tools is None:
        return [], None
    specs = list(tools.tools.values())
    key = tuple((s.name, s.description, id(s.parameters)) for s in specs)
    entry = _DECLARED.get(key)
    if entry is None:
        if len(_DECLARED) >= _DECLARED_MAX:
            _DECLARED.clear()
        entry = (_build_infos(tools), tools.digest(), [s.parameters for s in specs])
        _DECLARED[key] = entry
    return entry[0], entry[1]


async def _execute(tools: ToolSet | None, call: ToolCall) -> ToolResult:
    if call.parse_error:
        return ToolResult(
            call.function,
            f"Error: the arguments of this {call.function} call could not be read "
            f"({call.parse_error}). Send the arguments as one JSON object.",
            True,
        )
    if tools is None:
        return ToolResult(call.function, "Error: no tools are available in this task.", True)
    arguments: Any = call.arguments
    return await tools.call(call.function, arguments)


def _tool_message(call: ToolCall, result: ToolResult) -> ChatMessageTool:
    error = None
    if result.is_error:
        error = ToolCallError("unknown", result.content.removeprefix("Error: "))
    return ChatMessageTool(
        content=result.content, tool_call_id=call.id, function=call.function, error=error
    )


async def run_agent(
    model: Model | str,
    role: RoleConfig,
    system: Prompt,
    user: str,
    tools: ToolSet | None = None,
) -> AgentRun:
    """Run one episode of ``role``: system prompt, user turn, tool rounds, final answer.

    Args:
        model: An inspect_ai model, or its name as ``provider/model``.
        role: The role's budget and generation settings.
        system: The system prompt (its hash goes into every record).
        user: The user turn (the chunk to integrate, the question to answer, ...).
        tools: The tools the model may call, or None for a tool-free role.

    Returns:
        The final text, the episode record and the whole message history.

    Raises:
        AgentError: A model call failed even after inspect_ai's retries.
    """
    llm = resolve_model(model)
    name = str(llm)
    config = role.generate_config(name)
    infos, digest = _declarations(tools)
    record = EpisodeRecord(
        role=role.role,
        model=name,
        prompt_name=system.name,
        prompt_hash=system.sha256,
        toolset=tools.name if tools is not None else None,
        toolset_digest=digest,
        max_rounds=role.max_rounds,
        max_tokens=role.max_tokens,
        reasoning_effort=config.reasoning_effort,
        temperature=role.temperature,
        zero_cost_baseline=is_policy(llm),
    )
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=system.text),
        ChatMessageUser(content=user),
    ]
    started = time.perf_counter()
    text: str | None = None
    for round_no in range(1, role.max_rounds + 1):
        output, retries = await _generate(llm, messages, infos, config, record, round_no, False)
        message = output.message
        messages.append(message)
        calls = list(message.tool_calls or [])
        if not calls or not infos:
            text = output.completion
            record.calls.append(_call_record(record, round_no, output, retries, [], False))
            break
        results = []
        for call in calls:
            if not call.id:
                call.id = f"call_{uuid.uuid4().hex[:12]}"
            result = await _execute(tools, call)
            messages.append(_tool_message(call, result))
            results.append(
                ToolCallRecord.of(call.id, call.function, call.arguments, result.content,
                                  result.is_error)
            )
        record.calls.append(_call_record(record, round_no, output, retries, results, False))
    if text is None:
        record.budget_exhausted = True
        messages.append(ChatMessageUser(content=FINAL_REQUEST))
        round_no = role.max_rounds + 1
        output, retries = await _generate(llm, messages, infos, config, record, round_no, True)
        messages.append(output.message)
        text = output.completion
        record.calls.append(_call_record(record, round_no, output, retries, [], True))
    record.final_text = text
    record.wall_s = time.perf_counter() - started
    return AgentRun(text, record, messages)


async def _generate(
    llm: Model,
    messages: list[ChatMessage],
    infos: list[ToolInfo],
    config: GenerateConfig,
    record: EpisodeRecord,
    round_no: int,
    final: bool,
) -> tuple[ModelOutput, int]:
    began = time.perf_counter()
    what = f"the {record.role} agent's model call {round_no}"
    try:
        output, retries = await call_model(
            llm, messages, infos, "none" if final and infos else None, config, what
        )
    except CallFailed as exc:
        record.error = str(exc)
        raise AgentError(str(exc), record) from exc
    output.time = time.perf_counter() - began
    if output.empty:
        record.error = f"empty response: {output.error or 'no message and no error given'}"
        raise AgentError(
            f"the {record.role} agent's model call {round_no} to {record.model} returned "
            f"nothing ({record.error})",
            record,
        )
    return output, retries


def _call_record(
    record: EpisodeRecord,
    round_no: int,
    output: ModelOutput,
    retries: int,
    calls: list[ToolCallRecord],
    final: bool,
) -> CallRecord:
    return CallRecord(
        role=record.role,
        round=round_no,
        model=record.model,
        prompt_hash=record.prompt_hash,
        tool_calls=calls,
        stop_reason=output.stop_reason,
        latency_s=output.time or 0.0,
        retries=retries,
        usage=usage_from_inspect(output.usage, record.model),
        forced_final=final,
    )

