"""Scripted stand-ins for the skill setting's model roles, for short real offline chains.

``Executor`` plays ALFWorld through the execution agent's real prompts and turns:
it reads the goal and the admissible actions from the messages, takes an object
the goal names, carries it to the receptacle the goal names and puts it there,
and otherwise walks to receptacles in an order seeded by the system prompt (so
the guidance a variant serves changes the walk). ``Curator`` keeps one file per
goal family through the write set: it views the library, then creates the
family's file or appends a line for the attempt to it. Both answer with usage
derived from the text they see (about four characters a token), the prefix of
the conversation counted as cached input in 128-token blocks, as a provider's
prompt cache would.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.model._model import Model
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.tool import ToolCall

__all__ = ["Curator", "Executor"]

_ADMISSIBLE = re.compile(r"Actions the environment accepts now: \[(.*)\]")
_GOAL = re.compile(r"Your task is to: (.*?)\.?\s*$", re.MULTILINE)
_ACTION = re.compile(r"<action>(.*?)</action>")
_WORD = re.compile(r"[a-z]+")


def _tokens(messages: list[ChatMessage]) -> int:
    return sum(len(m.text) for m in messages) // 4


_CACHE_BLOCK = 128
"""Prompt caches serve a prefix in blocks (OpenAI: 128 tokens), so a little repeats."""


def _usage(messages: list[ChatMessage], reply: str) -> ModelUsage:
    context = _tokens(messages)
    cached = min(context, _tokens(messages[:-1])) // _CACHE_BLOCK * _CACHE_BLOCK
    output = max(1, len(reply) // 4)
    return ModelUsage(input_tokens=context - cached, output_tokens=output,
                      input_tokens_cache_read=cached or None,
                      total_tokens=context + output)


def _reply(messages: list[ChatMessage], content: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", content)
    out.usage = _usage(messages, content)
    return out


class Executor:
    """A goal-directed walker standing in for the execution agent (see the module doc)."""

    def __call__(self, input: list[ChatMessage], tools: Any, tool_choice: Any,
                 config: Any) -> ModelOutput:
        text = "\n".join(m.text for m in input)
        goal_match = _GOAL.search(text)
        goal = set(_WORD.findall(goal_match.group(1).lower())) if goal_match else set()
        found = _ADMISSIBLE.findall(input[-1].text)
        admissible = [a.strip() for a in found[-1].split(",")] if found else ["look"]
        done = [m.text for m in input if isinstance(m, ChatMessageAssistant)]
        taken = [a for reply in done for a in _ACTION.findall(reply)]
        action = self._choose(goal, admissible, taken, input[0].text)
        return _reply(input, f"<think>Working towards the goal.</think>\n<action>{action}</action>")

    @staticmethod
    def _choose(goal: set[str], admissible: list[str], taken: list[str], system: str) -> str:
        def names(action: str) -> set[str]:
            return set(_WORD.findall(action.lower()))

        for action in admissible:  # carrying the goal's object to the goal's receptacle
            if action.startswith("put ") and len(names(action) & goal) >= 2:
                return action
        for action in admissible:
            if action.startswith("take ") and names(action.split(" from ")[0]) & goal:
                return action
        holding = any(a.startswith("take ") for a in taken[-6:])
        walks = [a for a in admissible if a.startswith("go to ") and a not in taken]
        if holding:
            for action in admissible:
                if action.startswith("go to ") and names(action) & goal:
                    return action
        if walks:
            seed = hashlib.sha256(system.encode()).hexdigest()
            return min(walks, key=lambda a: hashlib.sha256((seed + a).encode()).hexdigest())
        return "look"

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)


def _call(messages: list[ChatMessage], name: str, **args: Any) -> ModelOutput:
    message = ChatMessageAssistant(content="", source="generate",
                                   tool_calls=[ToolCall(id=f"c{len(messages)}", function=name,
                                                        arguments=args)])
    out = ModelOutput(model="mockllm/model",
                      choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])
    out.usage = _usage(messages, f"{name} {args}")
    return out


class Curator:
    """Keeps one file per goal family, one line per attempt (see the module doc)."""

    def __call__(self, input: list[ChatMessage], tools: Any, tool_choice: Any,
                 config: Any) -> ModelOutput:
        turn = next(m.text for m in input if m.role == "user")
        task = re.search(r"The attempt at task (\S+) ended in (\w+)", turn)
        family = re.search(r"family:? \**(\w+)", turn, re.IGNORECASE)
        assert task is not None and family is not None, turn[:400]
        path = f"/memories/{family.group(1).replace('_', '-')}.md"
        line = f"- {task.group(1)}: {task.group(2).lower()}"
        results = [m for m in input if isinstance(m, ChatMessageTool)]
        if not results:
            return _call(input, "view", path="/memories")
        last = results[-1]
        if last.function == "view" and path.rsplit("/", 1)[-1] in last.text and \
                not last.text.lstrip().startswith("1\t"):
            return _call(input, "view", path=path)
        if last.function == "view" and last.text.lstrip().startswith("1\t"):
            lines = len([x for x in last.text.splitlines() if re.match(r"\s*\d+\t", x)])
            return _call(input, "insert", path=path, insert_line=lines, insert_text=line)
        if last.function == "view":
            name = path.rsplit("/", 1)[-1].removesuffix(".md")
            header = (f"---\nname: {name}\ndescription: Attempts at {family.group(1)} tasks\n"
                      "metadata:\n  type: note\n  sources:\n"
                      f"    - {{task: {task.group(1)}, outcome: {task.group(2).lower()}}}\n---\n")
            return _call(input, "create", path=path,
                         file_text=f"{header}# {family.group(1)}\n{line}\n")
        return _reply(input, "Recorded the attempt.")

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)
