"""A finished task attempt: its steps, outcome and timing, and its markdown rendering.

The rendering is what a curator (the management agent) reads after each task
and what the Episode-log variant appends to its store, so it states the goal and
outcome first and then every action with the game's answer, in order.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from memdir.skills._policy import Step

__all__ = ["TRAJECTORY_SCHEMA", "Ending", "Trajectory", "render_trajectory"]

TRAJECTORY_SCHEMA = 1
Ending = Literal["won", "step_cap", "gave_up"]


class Trajectory(BaseModel):
    """One episode of one task, as recorded by the chain runner."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = TRAJECTORY_SCHEMA
    task_id: str
    family: str
    goal: str
    policy: str
    initial_observation: str
    steps: list[Step] = Field(default_factory=list)
    success: bool
    ended: Ending
    max_steps: int
    reset_seconds: float
    wall_seconds: float
    note: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def steps_used(self) -> int:
        """How many actions the episode took."""
        return len(self.steps)


_ENDINGS: dict[str, str] = {
    "won": "success: the environment reported the goal reached",
    "step_cap": "failure: the step cap was reached before the goal",
    "gave_up": "failure: the policy stopped before the goal",
}


def _indent(text: str) -> str:
    return "\n".join(f"   {line}" if line else "" for line in text.splitlines())


def render_trajectory(t: Trajectory) -> str:
    """Markdown for a curator: task, goal, outcome, then each action and the game's reply."""
    lines = [
        f"# Task {t.task_id}",
        "",
        f"- goal: {t.goal}",
        f"- family: {t.family}",
        f"- outcome: {_ENDINGS[t.ended]} ({t.steps_used} of {t.max_steps} steps)",
    ]
    if t.note:
        lines.append(f"- note: {t.note}")
    lines += ["", "## Start", "", t.initial_observation.strip(), "", "## Steps", ""]
    if not t.steps:
        lines.append("(no action was taken)")
    for number, step in enumerate(t.steps, start=1):
        lines.append(f"{number}. `{step.action}`")
        lines.append(_indent(step.observation.strip()) or "   (no reply)")
    return "\n".join(lines).rstrip() + "\n"
