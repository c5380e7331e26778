"""memdir's inspect_ai model provider: ``memdir/grep-reader``, the offline policy.

Importing :mod:`memdir.agents` registers it. For ``inspect eval --model
memdir/grep-reader`` without importing memdir first, the package declares the
entry point ``[project.entry-points.inspect_ai] memdir = "memdir.agents._providers"``.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from memdir.agents._offline import decide

__all__ = ["GrepReaderAPI", "memdir_provider"]

POLICIES = ("grep-reader",)


class GrepReaderAPI(ModelAPI):
    """A deterministic search policy served as an inspect_ai model (no LLM, zero tokens)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008  (inspect_ai's signature)
        **model_args: Any,
    ) -> None:
        if model_name not in POLICIES:
            raise ValueError(
                f"memdir/{model_name} is not a memdir policy; choose one of "
                + ", ".join(f"memdir/{p}" for p in POLICIES)
            )
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """Decide the next step from the history: tool calls, or the final answer."""
        final = tool_choice == "none" or not tools
        decision = decide(input, [t.name for t in tools], final)
        name = f"memdir/{self.model_name}"
        if decision.answer is not None:
            output = ModelOutput.from_content(model=name, content=decision.answer)
        else:
            calls = [
                ToolCall(id=call_id, function=tool, arguments=args)
                for call_id, tool, args in decision.calls
            ]
            message = ChatMessageAssistant(
                content="", tool_calls=calls, model=name, source="generate"
            )
            output = ModelOutput(
                model=name,
                choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")],
            )
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output

    def max_tokens(self) -> int | None:
        """The policy writes short answers; no output cap applies."""
        return None


@modelapi(name="memdir")
def memdir_provider() -> type[ModelAPI]:
    """The ``memdir`` provider of inspect_ai (models ``memdir/<policy>``)."""
    return GrepReaderAPI
