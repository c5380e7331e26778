"""What an execution policy is: something that picks the next action of an episode.

The handcoded expert implements it offline; a model-driven execution agent will
implement the same protocol, so the chain runner never knows which one it drives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

__all__ = ["GiveUp", "Policy", "Step"]


class Step(BaseModel):
    """One action taken in the environment and the observation it produced."""

    model_config = ConfigDict(frozen=True)

    action: str
    observation: str


class GiveUp(Exception):
    """Raised by a policy that has no further action to offer; the episode ends as failed."""


@runtime_checkable
class Policy(Protocol):
    """Chooses actions; ``history`` is empty at the start of each episode."""

    name: str

    async def act(self, observation: str, admissible_actions: Sequence[str],
                  history: Sequence[Step]) -> str:
        """The next action, given the latest observation and the steps taken so far.

        Args:
            observation: what the environment said last (the game's intro at the start).
            admissible_actions: the commands the game accepts now.
            history: the episode's steps so far, oldest first.

        Raises:
            GiveUp: when the policy has nothing further to try.
        """
        ...
