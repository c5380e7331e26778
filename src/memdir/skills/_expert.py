"""ALFWorld's handcoded expert as an execution policy, adapted to the legacy game files.

The expert shipped in ``alfworld`` 0.4.2 (``HandCodedTWAgent``) plans from the
game's logical facts and the admissible commands, and it speaks ALFWorld's newer
placing command ``move X to Y``. The published game files say ``put X in/on Y``
instead; fed those files unchanged, the expert never sees its placing command
among the admissible ones and stalls before the last step.

We leave the game untouched (an agent sees exactly the published commands) and
translate at the expert's edge: the admissible commands it reads are rewritten
to the ``move`` form, and a ``move`` it chooses is played as the matching
``put``. The last action handed back to the expert stays in the ``put`` form the
game executed, which its inventory bookkeeping recognises (it looks for the word
"put"); with the ``move`` form that bookkeeping never fires, and the expert
loses track of what it holds after the first placement of a two-object task.

In these files receptacles can share a location (two shelves at one spot); once
there, the game offers ``go to`` for neither, and shows only the first one's
contents. When the expert asks to go to such a neighbour, we play ``examine X``
instead (it shows X's contents or says it is closed) and tell the expert it went
there. Otherwise, like ALFWorld's own wrapper, the expert opens every episode
with ``look`` and answers ``look`` whenever its choice is not admissible. It draws on Python's
global random generator; each episode gets its own seeded generator state,
swapped in around every call, so runs are reproducible and other users of
``random`` are undisturbed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from importlib import import_module
from typing import Any

from memdir.skills._env import AlfworldEnv, EnvError
from memdir.skills._policy import GiveUp, Step

__all__ = ["ExpertPolicy", "to_legacy", "to_move"]

_PUT = re.compile(r"^put (?P<obj>.+) in/on (?P<recep>.+)$")
_MOVE = re.compile(r"^move (?P<obj>.+) to (?P<recep>.+)$")


def to_move(command: str) -> str:
    """The newer form of a legacy placing command; other commands pass through."""
    match = _PUT.match(command)
    return f"move {match['obj']} to {match['recep']}" if match else command


def to_legacy(command: str) -> str:
    """The legacy form of a ``move X to Y`` command; other commands pass through."""
    match = _MOVE.match(command)
    return f"put {match['obj']} in/on {match['recep']}" if match else command


class ExpertPolicy:
    """ALFWorld's handcoded expert, reading the facts of the game ``env`` is playing.

    Args:
        env: the environment the episodes run in, created with ``facts=True``.
        seed: seeds the expert's random choices (one generator state per task).
    """

    name = "alfworld-handcoded-expert"

    def __init__(self, env: AlfworldEnv, seed: int = 0) -> None:
        self._expert_module: Any = import_module("alfworld.agents.expert")
        self._env = env
        self._seed = seed
        self._agent: Any = self._expert_module.HandCodedTWAgent(max_steps=200)
        self._rng_state: Any = None
        self._stand_in: tuple[str, str] | None = None  # (played, what the expert asked)

    async def act(self, observation: str, admissible_actions: Sequence[str],
                  history: Sequence[Step]) -> str:
        """The expert's next command, in the game's own (legacy) form."""
        state = self._env.game_state
        if "facts" not in state or state["facts"] is None:
            raise EnvError("the expert reads the game's facts: create AlfworldEnv(facts=True)")
        if not history:
            self._rng_state = random.Random(f"{self._seed}:{self._env.task.task_id}").getstate()
            self._agent.reset(str(self._env.task.game_file))
            self._call(self._agent.observe, observation)
            return "look"
        moves = {to_move(command): command for command in admissible_actions}
        view = {"feedback": observation, "admissible_commands": list(moves),
                "facts": state["facts"], "won": bool(state["won"])}
        last = history[-1].action
        if self._stand_in is not None and self._stand_in[0] == last:
            last = self._stand_in[1]
        self._stand_in = None
        stops = (self._expert_module.HandCodedAgentFailed,
                 self._expert_module.HandCodedAgentTimeout)
        try:
            choice = str(self._call(self._agent.act, view, 0, view["won"], last))
        except stops as err:
            raise GiveUp(f"the handcoded expert stopped: {type(err).__name__}") from err
        if choice in moves:
            return moves[choice]
        nearby = "examine " + choice.removeprefix("go to ")
        if choice.startswith("go to ") and nearby in moves:
            self._stand_in = (nearby, choice)
            return nearby
        return "look"

    def _call(self, fn: Any, *args: Any) -> Any:
        outside = random.getstate()
        random.setstate(self._rng_state)
        try:
            return fn(*args)
        finally:
            self._rng_state = random.getstate()
            random.setstate(outside)
