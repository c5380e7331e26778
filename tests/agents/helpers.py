"""Helpers for the agent tests: scripted outputs, tiny tool sets, a verbatim store writer."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.model._chat_message import ChatMessageAssistant
from inspect_ai.model._model import Model
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.tool import ToolCall

from memdir.conversation import Conversation, Session, conversation_from_json
from memdir.store import Frontmatter, Store, render_file


def usage(inp: int = 100, out: int = 10, cached: int = 0, write: int = 0,
          reasoning: int | None = None) -> ModelUsage:
    return ModelUsage(
        input_tokens=inp, output_tokens=out, input_tokens_cache_read=cached or None,
        input_tokens_cache_write=write or None, reasoning_tokens=reasoning,
        total_tokens=inp + cached + write + out,
    )


def calls(*items: tuple[str, dict[str, Any] | str], u: ModelUsage | None = None) -> ModelOutput:
    """An output making several tool calls in one turn (a str argument = malformed JSON)."""
    tool_calls = []
    for n, (name, args) in enumerate(items):
        if isinstance(args, str):
            tool_calls.append(ToolCall(id=f"c{n}", function=name, arguments={},
                                       parse_error=f"bad JSON: {args}"))
        else:
            tool_calls.append(ToolCall(id=f"c{n}", function=name, arguments=args))
    message = ChatMessageAssistant(content="", tool_calls=tool_calls, source="generate")
    out = ModelOutput(model="mockllm/model",
                      choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])
    out.usage = u or usage()
    return out


def text(content: str, u: ModelUsage | None = None) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", content)
    out.usage = u or usage()
    return out


class Script:
    """Scripted outputs that fail the test if they run out or are left unused."""

    def __init__(self, outputs: Iterable[ModelOutput | Exception]) -> None:
        self.outputs = list(outputs)
        self.used = 0
        self.seen: list[list[Any]] = []

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        self.seen.append(list(input))
        if self.used >= len(self.outputs):
            raise AssertionError("the script ran out of outputs")
        item = self.outputs[self.used]
        self.used += 1
        if isinstance(item, Exception):
            raise item
        return item

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)

    def assert_done(self) -> None:
        assert self.used == len(self.outputs), f"{len(self.outputs) - self.used} outputs unused"


def session_file(session: Session, speakers: list[str]) -> tuple[str, str]:
    stem = f"session-{session.index:02d}"
    description = f"Session {session.index}, {session.date_text}, {' and '.join(speakers)}"
    lines = [f"# Session {session.index} ({session.date_text})", ""]
    for turn in session.turns:
        lines.append(f"[{turn.locator}] {turn.speaker}: {turn.text}")
    body = "\n".join(lines) + "\n"
    header = Frontmatter(name=stem, description=description)
    return f"/memories/{stem}.md", render_file(header, body)


def write_verbatim(store: Store, conversation: Conversation) -> None:
    """A tiny verbatim-dump writer: one file per session, turns as locator-marked lines."""
    for session in conversation.sessions:
        path, content = session_file(session, conversation.speakers)
        store.create(path, content)


def locomo_conversation(
    path: Path, sample: str = "conv-26"
) -> tuple[Conversation, list[dict[str, Any]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    item = next(d for d in data if d["sample_id"] == sample)
    conv = item["conversation"]
    sessions = []
    n = 1
    while f"session_{n}" in conv:
        turns = []
        for t in conv[f"session_{n}"]:
            caption = f" [shares an image: {t['blip_caption']}]" if t.get("blip_caption") else ""
            turns.append({"speaker": t["speaker"], "text": t["text"] + caption})
        sessions.append({"id": n, "date": conv[f"session_{n}_date_time"], "turns": turns})
        n += 1
    speakers = [conv["speaker_a"], conv["speaker_b"]]
    data = {"speakers": speakers, "sessions": sessions}
    return conversation_from_json(data, id=sample), item["qa"]
