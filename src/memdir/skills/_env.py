"""ALFWorld's text environment, played from the game files on a path, offline.

One :class:`AlfworldEnv` plays one game at a time: Fast Downward's library, which
TextWorld uses to ground and step a game, holds a single game per process. The
same TextWorld environment object is reused across games (its library is loaded
once), and PDDL translations and grammar parses are cached (see
:mod:`memdir.skills._twcache`).

The game files are left exactly as published. Their grammar names the placing
command ``put X in/on Y`` (ALFWorld's newer grammar says ``move X to Y``); an
agent here sees and types the ``put`` form. Adapters that speak the newer form,
such as the handcoded expert, translate at their own edge (see ``_expert.py``).
"""

from __future__ import annotations

import time
from importlib import import_module
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from memdir.skills._families import AlfworldTask
from memdir.skills._twcache import (
    TranslationCache,
    install_parse_cache,
    install_translation_cache,
)

__all__ = ["DEFAULT_MAX_STEPS", "AlfworldEnv", "EnvError", "StepResult", "alfworld_missing"]

DEFAULT_MAX_STEPS = 50
_playing: list[AlfworldEnv] = []  # the env whose game Fast Downward's library holds now


class EnvError(RuntimeError):
    """The environment was used out of order (a step before any reset, after the end)."""


class StepResult(BaseModel):
    """What the environment shows after a reset or a step."""

    model_config = ConfigDict(frozen=True)

    observation: str
    admissible_actions: tuple[str, ...]
    won: bool
    steps: int
    done: bool


def alfworld_missing() -> str | None:
    """Why the ALFWorld environment cannot run here, or None when it can."""
    try:
        for module in ("fast_downward", "textworld", "alfworld.agents.environment.alfred_tw_env"):
            import_module(module)
    except ImportError as err:
        return f"alfworld is not importable ({err}); install it with `pip install alfworld`"
    return None


class AlfworldEnv:
    """Plays ALFWorld games one after another, with a step cap and timing.

    Args:
        max_steps: actions allowed per game; the episode is done when it is reached.
        cache_dir: folder where PDDL translations persist across runs; None keeps
            them in memory only.
        facts: also compute the game's logical facts each step (the handcoded
            expert reads them; a model-driven agent does not need them).
    """

    def __init__(self, max_steps: int = DEFAULT_MAX_STEPS, cache_dir: Path | None = None,
                 facts: bool = False) -> None:
        reason = alfworld_missing()
        if reason is not None:
            raise ImportError(reason)
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        textworld = import_module("textworld")
        demangler = import_module("alfworld.agents.environment.alfred_tw_env").AlfredDemangler
        pddl_env = import_module("textworld.envs.pddl.pddl").PddlEnv

        self.max_steps = max_steps
        self.translations: TranslationCache = install_translation_cache(cache_dir)
        install_parse_cache()
        infos = textworld.EnvInfos(feedback=True, won=True, admissible_commands=True, facts=facts)
        self._env: Any = demangler(shuffle=False)(pddl_env(infos))
        self._task: AlfworldTask | None = None
        self._state: Any = None
        self._steps = 0
        self._done = True
        self.reset_seconds = 0.0

    @property
    def task(self) -> AlfworldTask:
        """The game being played."""
        if self._task is None:
            raise EnvError("no game loaded yet: call reset(task) first")
        return self._task

    @property
    def game_state(self) -> Any:
        """TextWorld's state after the last reset or step (facts included when asked for)."""
        if self._state is None:
            raise EnvError("no game loaded yet: call reset(task) first")
        return self._state

    def reset(self, task: AlfworldTask) -> StepResult:
        """Load a task's game and start it; ``reset_seconds`` records how long that took."""
        started = time.perf_counter()
        if self._task is None or self._task.game_file != task.game_file:
            self._task = None  # a failed load must not pass for the previous game
            self._env.load(str(task.game_file))
        self._state = self._env.reset()
        _playing[:] = [self]
        self.reset_seconds = time.perf_counter() - started
        self._task, self._steps, self._done = task, 0, False
        return self._result()

    def step(self, action: str) -> StepResult:
        """Carry out one action; a command the game does not know answers "Nothing happens."."""
        if self._state is None:
            raise EnvError("no game loaded yet: call reset(task) first")
        if self._done:
            raise EnvError("the episode is over (won or out of steps): call reset(task)")
        if _playing != [self]:
            raise EnvError("another AlfworldEnv has loaded a game since this one's reset, and "
                           "a process holds one game at a time: call reset(task) again")
        self._state, _, _ = self._env.step(action)
        self._steps += 1
        self._done = bool(self._state["won"]) or self._steps >= self.max_steps
        return self._result()

    def _result(self) -> StepResult:
        state = self._state
        return StepResult(observation=str(state["feedback"]).strip(),
                          admissible_actions=tuple(state["admissible_commands"]),
                          won=bool(state["won"]), steps=self._steps, done=self._done)
