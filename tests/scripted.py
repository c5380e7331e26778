"""Scripted models for tests: inspect_ai's mockllm with outputs given in order.

Every output carries an explicit usage, so mockllm never tries to fetch a tokenizer.
A script that runs out fails the test, and ``assert_done`` fails one that was not
used up.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.model._chat_message import ChatMessageAssistant
from inspect_ai.model._model import Model
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.tool import ToolCall

__all__ = ["Script", "calls", "text", "usage"]


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
