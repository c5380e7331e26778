"""The model-driven execution agent: a :class:`Policy` that asks a model for each action.

The system prompt is the ``execution`` prompt with the task and the guidance the
memory variant retrieved. Every step adds one user turn (``turn-step``: the step
number from the second step on, the latest observation and the admissible
actions) and the model's reply, so the conversation grows by appending and a
provider's prompt cache keeps serving its prefix. The model answers in tagged
form, its reasoning inside ``<think>`` and the one action inside ``<action>``;
:func:`parse_action` reads the action tag. The model runs at temperature 0 (the
``execution`` role's settings). Each model call
is recorded as a :class:`CallRecord`; :meth:`ModelPolicy.take_record` hands the
episode's record to the runner.

**Compaction.** A long episode is compacted (:class:`Compaction`): once a call's
context and reply reach ``at_tokens`` (the provider's own counts, every input
token cached or not), the next call's history keeps the system prompt, the first
step's turn and the last ``keep_steps`` steps in full, and replaces the steps
between with one note (``turn-compact``) listing each folded step's action and,
cut to ``observation_chars``, what followed it. The compaction is mechanical (no
model call, so it costs nothing and every token billed is a call's own) and runs
again whenever the grown history crosses the threshold again. The paper compacts
long execution episodes by the policy of its conversational setting without
stating that policy in the text we hold, so these are memdir's own rules. The call
after a compaction records ``kept_prefix``, the first call's input: the part of
its context seen before, which the compute bounds need (the rest is prefilled
anew).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
)
from pydantic import BaseModel, ConfigDict, Field

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

__all__ = ["COMPACT_PROMPT", "NO_GUIDANCE", "STEP_PROMPT", "Compaction", "ModelPolicy",
           "parse_action", "step_turn"]

NO_GUIDANCE = "(none for this task)"
STEP_PROMPT = "turn-step"
"""The user turn of every environment step."""
COMPACT_PROMPT = "turn-compact"
"""The note that stands for the folded steps of a compacted episode."""


class Compaction(BaseModel):
    """When and how a long execution episode is compacted (see the module docstring).

    A run config's ``compaction`` entry is one of these; a chain folder pins it,
    so a chain is never resumed under other settings.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    at_tokens: int = Field(default=32_000, ge=1, description="Compact before the next "
                           "call once a call's input plus output reaches this many tokens.")
    keep_steps: int = Field(default=10, ge=0, description="Steps kept in full before the "
                            "current one (the first step's turn is always kept).")
    observation_chars: int = Field(default=200, ge=0, description="Most characters of a "
                                   "folded step's following observation kept in the note.")


_DEFAULT_COMPACTION = Compaction()


@dataclass
class _Turn:
    """One environment step: the turn the model was shown, its observation and its reply."""

    user: ChatMessageUser
    observation: str
    reply: ChatMessageAssistant | None = None
    action: str = ""


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
    return load_prompt(STEP_PROMPT, counter=counter, observation=observation.strip(),
                       admissible=", ".join(admissible) or "(none listed)").text


class ModelPolicy:
    """Asks a model for every action of an episode.

    Args:
        model: An inspect_ai model or its ``provider/model`` name.
        role: The execution role's settings (default: :data:`EXECUTION_ROLE`).
        compaction: When to compact a long episode (default: :class:`Compaction`'s
            defaults, as a run config's; None: never).
    """

    def __init__(self, model: Model | str, role: RoleConfig | None = None,
                 compaction: Compaction | None = _DEFAULT_COMPACTION) -> None:
        self.llm = resolve_model(model)
        self.role = role or EXECUTION_ROLE
        self.compaction = compaction
        self.name = f"model:{self.llm}"
        self.goal = ""
        self.guidance = NO_GUIDANCE
        self._system: ChatMessageSystem | None = None
        self._turns: list[_Turn] = []
        self._folded = 0
        """Steps whose replies (and the turns after the first) the note stands for."""
        self._compact_next = False
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
        self._system = ChatMessageSystem(content=prompt.text)
        self._turns, self._folded, self._compact_next = [], 0, False
        return EpisodeRecord(role=self.role.role, model=str(self.llm), prompt_name=prompt.name,
                             prompt_hash=prompt.sha256, max_rounds=self.role.max_rounds,
                             max_tokens=self.role.max_tokens, temperature=self.role.temperature)

    def _note(self) -> ChatMessageUser:
        """The note standing for steps 1..folded: each step's action and what followed it."""
        assert self.compaction is not None
        cap = self.compaction.observation_chars
        lines = []
        for number, turn in enumerate(self._turns[:self._folded], start=1):
            after = self._turns[number].observation if number < self._folded else ""
            seen = " ".join(after.split())
            seen = seen if len(seen) <= cap else seen[:cap].rstrip() + " ..."
            lines.append(f"- step {number}: {turn.action}" + (f" -> {seen}" if seen else ""))
        return ChatMessageUser(content=load_prompt(
            COMPACT_PROMPT, first="1", last=str(self._folded), steps="\n".join(lines)).text)

    def messages(self) -> list[ChatMessage]:
        """The history the next call is sent: appended turns, or the compacted form."""
        assert self._system is not None and self._turns
        first = self._turns[0]
        history: list[ChatMessage] = [self._system, first.user]
        if self._folded:
            history.append(self._note())
            kept = self._turns[self._folded:]
        else:
            kept = self._turns[1:]
            if first.reply is not None:
                history.append(first.reply)
        for turn in kept:
            history.append(turn.user)
            if turn.reply is not None:
                history.append(turn.reply)
        return history

    def _maybe_compact(self) -> bool:
        """Fold older steps into the note if the last call crossed the threshold."""
        if not self._compact_next or self.compaction is None:
            return False
        self._compact_next = False
        done = len(self._turns) - 1  # steps with a reply, before the current one
        folded = done - self.compaction.keep_steps
        if folded <= self._folded:
            return False
        self._folded = folded
        return True

    async def act(self, observation: str, admissible_actions: Sequence[str],
                  history: Sequence[Step]) -> str:
        """Ask the model for the next action (see :class:`Policy`)."""
        if not history or self._record is None:
            self._record = self._start()
        record = self._record
        turn = step_turn(len(history) + 1, observation, admissible_actions)
        self._turns.append(_Turn(ChatMessageUser(content=turn), observation))
        compacted = self._maybe_compact()
        began = time.perf_counter()
        try:
            output, retries = await call_model(
                self.llm, self.messages(), [], None, self.role.generate_config(str(self.llm)),
                f"the execution agent's model call {len(record.calls) + 1}")
        except CallFailed as exc:
            record.error = str(exc)
            raise
        latency = time.perf_counter() - began
        usage = usage_from_inspect(output.usage, record.model)
        record.calls.append(CallRecord(
            role=record.role, round=len(record.calls) + 1, model=record.model,
            prompt_hash=record.prompt_hash, stop_reason=output.stop_reason,
            latency_s=latency, retries=retries, usage=usage,
            kept_prefix=record.calls[0].usage.input if compacted else None))
        record.wall_s += latency
        if self.compaction is not None and usage.input + usage.output >= self.compaction.at_tokens:
            self._compact_next = True
        action = parse_action(output.completion)
        self._turns[-1].reply = output.message
        self._turns[-1].action = action
        if not action:
            raise GiveUp("the model replied without an action")
        record.final_text = action
        return action
