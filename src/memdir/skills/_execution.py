"""The model-driven execution agent: a :class:`Policy` that asks a model for each action.

The system prompt is the ``execution`` prompt with the task and the guidance the
memory variant retrieved. Every step adds one user turn (``turn-step``: the step
number from the second step on, the latest observation and the admissible
actions) and the model's reply, so the conversation only grows by appending and a
provider's prompt cache keeps serving its prefix. The model answers in tagged
form, its reasoning inside ``<think>`` and the one action inside ``<action>``;
:func:`parse_action` reads the action tag. The model runs at temperature 0 (the
``execution`` role's settings). Each model call
is recorded as a :class:`CallRecord`; :meth:`ModelPolicy.take_record` hands the
episode's record to the runner.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
)

from memdir.agents import (
    CallFailed,
    CallRecord,
    EpisodeRecord,
    RoleConfig,
    call_model,
    load_prompt,
    resolve_model,
    usage_from_inspect,
)
from memdir.skills._policy import GiveUp, Step
from memdir.skills._roles import EXECUTION_ROLE

__all__ = ["NO_GUIDANCE", "ModelPolicy", "parse_action", "step_turn"]

NO_GUIDANCE = "(none for this task)"


_ACTION = re.compile(r"<action>(.*?)(?:</action>|$)", re.IGNORECASE | re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.IGNORECASE | re.DOTALL)


def _clean(line: str) -> str:
    line = line.strip().strip("`").strip()
    if line.lower().startswith("action:"):
        line = line[len("action:"):]
    return line.lstrip(">").strip().strip("`").strip().rstrip(".").strip()


def parse_action(reply: str) -> str:
    """The action in a model's reply: the last ``<action>`` tag's text, else the first line.

    The reasoning inside ``<think>`` is never read as an action. A reply without an
    action tag (a model that ignored the format) falls back to its first non-empty
    line outside the reasoning, without quotes or an ``Action:`` label.
    """
    outside = _THINK.sub("", reply)
    tagged = [_clean(m) for m in _ACTION.findall(outside)]
    tagged = [t for t in tagged if t]
    if tagged:
        return _clean(tagged[-1].splitlines()[0])
    for raw in outside.splitlines():
        line = _clean(raw)
        if line:
            return line
    return ""


def step_turn(step: int, observation: str, admissible: Sequence[str]) -> str:
    """The user turn of environment step ``step`` (1-based; the first step has no counter)."""
    counter = f"You are at step {step}.\n" if step > 1 else ""
    return load_prompt("turn-step", counter=counter, observation=observation.strip(),
                       admissible=", ".join(admissible) or "(none listed)").text


class ModelPolicy:
    """Asks a model for every action of an episode.

    Args:
        model: An inspect_ai model or its ``provider/model`` name.
        role: The execution role's settings (default: :data:`EXECUTION_ROLE`).
    """

    def __init__(self, model: Model | str, role: RoleConfig | None = None) -> None:
        self.llm = resolve_model(model)
        self.role = role or EXECUTION_ROLE
        self.name = f"model:{self.llm}"
        self.goal = ""
        self.guidance = NO_GUIDANCE
        self._messages: list[ChatMessage] = []
        self._record: EpisodeRecord | None = None

    def begin(self, goal: str, guidance: str) -> None:
        """Set the next episode's task and guidance (called before the episode starts)."""
        self.goal = goal
        self.guidance = guidance.strip() or NO_GUIDANCE
        self._record = None

    def take_record(self) -> EpisodeRecord | None:
        """The record of the last episode (None if no call was made), then forget it."""
        record, self._record = self._record, None
        return record

    def _start(self) -> EpisodeRecord:
        prompt = load_prompt(self.role.prompt, task=self.goal or "(see the observation)",
                             guidance=self.guidance)
        self._messages = [ChatMessageSystem(content=prompt.text)]
        return EpisodeRecord(role=self.role.role, model=str(self.llm), prompt_name=prompt.name,
                             prompt_hash=prompt.sha256, max_rounds=self.role.max_rounds,
                             max_tokens=self.role.max_tokens, temperature=self.role.temperature)

    async def act(self, observation: str, admissible_actions: Sequence[str],
                  history: Sequence[Step]) -> str:
        """Ask the model for the next action (see :class:`Policy`)."""
        if not history or self._record is None:
            self._record = self._start()
        record = self._record
        turn = step_turn(len(history) + 1, observation, admissible_actions)
        self._messages.append(ChatMessageUser(content=turn))
        began = time.perf_counter()
        try:
            output, retries = await call_model(
                self.llm, self._messages, [], None, self.role.generate_config(str(self.llm)),
                f"the execution agent's model call {len(record.calls) + 1}")
        except CallFailed as exc:
            record.error = str(exc)
            raise
        latency = time.perf_counter() - began
        self._messages.append(output.message)
        record.calls.append(CallRecord(
            role=record.role, round=len(record.calls) + 1, model=record.model,
            prompt_hash=record.prompt_hash, stop_reason=output.stop_reason,
            latency_s=latency, retries=retries,
            usage=usage_from_inspect(output.usage, record.model)))
        record.wall_s += latency
        action = parse_action(output.completion)
        if not action:
            raise GiveUp("the model replied without an action")
        record.final_text = action
        return action
