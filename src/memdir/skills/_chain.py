"""Runs tasks in a chain: one episode per task, one JSON record per finished task.

A chain lives in a folder:

- ``chain.json``, the manifest: the chain's name, seed, policy, step cap and
  task ids in order, with the order's digest, and a model policy's compaction
  settings;
- ``tasks/NNN.json``, one :class:`Trajectory` per finished task (NNN is the
  task's position in the chain), written atomically when the task ends.

Running a chain again in the same folder skips the tasks already recorded, so an
interrupted run resumes where it stopped. The manifest must match: a folder
written for another order, policy, step cap or compaction is refused rather than
mixed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from memdir.runs import RunRecord, read_record, write_record
from memdir.skills._env import AlfworldEnv
from memdir.skills._execution import Compaction, ModelPolicy
from memdir.skills._families import AlfworldTask, order_digest
from memdir.skills._policy import GiveUp, Policy, Step
from memdir.skills._trajectory import Ending, Trajectory

__all__ = [
    "ChainManifest",
    "ChainPlayer",
    "ChainMismatchError",
    "load_records",
    "run_chain",
    "run_episode",
    "success_by_family",
]

AfterTask = Callable[[int, Trajectory], Awaitable[None]]
BeforeTask = Callable[[int, AlfworldTask], Awaitable[None]]


class ChainMismatchError(ValueError):
    """The chain folder holds a run of a different chain."""


class ChainManifest(RunRecord):
    """What a chain folder is a run of."""

    version: int = 1
    name: str
    seed: int
    policy: str
    max_steps: int
    order_digest: str
    task_ids: list[str]
    compaction: Compaction | None = None
    """A model policy's compaction settings (None: the policy does not compact, as
    the expert, or a chain recorded before the settings were pinned)."""


async def run_episode(env: AlfworldEnv, task: AlfworldTask, policy: Policy) -> Trajectory:
    """Play one task with a policy until it is won, the step cap is hit, or the policy gives up."""
    started = time.perf_counter()
    result = await asyncio.to_thread(env.reset, task)
    reset_seconds = env.reset_seconds
    initial = result.observation
    history: list[Step] = []
    ending: Ending = "step_cap"
    note = ""
    while not result.done:
        try:
            action = await policy.act(result.observation, result.admissible_actions, history)
        except GiveUp as stop:
            ending, note = "gave_up", str(stop)
            break
        result = await asyncio.to_thread(env.step, action)
        history.append(Step(action=action, observation=result.observation))
    if result.won:
        ending = "won"
    return Trajectory(task_id=task.task_id, family=task.family, goal=task.goal,
                      policy=policy.name, initial_observation=initial, steps=history,
                      success=result.won, ended=ending, max_steps=env.max_steps,
                      reset_seconds=reset_seconds,
                      wall_seconds=time.perf_counter() - started, note=note)


def _record_path(chain_dir: Path, position: int) -> Path:
    return chain_dir / "tasks" / f"{position:03d}.json"


def _check_manifest(chain_dir: Path, manifest: ChainManifest) -> None:
    path = chain_dir / "chain.json"
    if not path.is_file():
        write_record(path, manifest)
        return
    found = read_record(path, ChainManifest)
    if found != manifest:
        differ = [k for k in ChainManifest.model_fields
                  if getattr(found, k) != getattr(manifest, k)]
        raise ChainMismatchError(
            f"{chain_dir} holds a different chain (differs in {', '.join(differ)}); "
            "resume with the same settings or choose an empty folder")


def load_records(chain_dir: Path) -> dict[int, Trajectory]:
    """The finished tasks of a chain folder, by position."""
    records = {}
    for path in sorted((chain_dir / "tasks").glob("*.json")):
        records[int(path.stem)] = read_record(path, Trajectory)
    return records


class ChainPlayer:
    """One chain in its folder: which positions are recorded, and how to play one more.

    Opening a player checks the folder's manifest (written if new) and the
    recorded tasks against the chain; :meth:`play` plays one position and writes
    its record. :func:`run_chain` plays every missing position in order; the skill
    setting's runner plays each as a sample of an inspect_ai eval instead.

    Raises:
        ChainMismatchError: when ``chain_dir`` holds a run of another chain.
    """

    def __init__(self, tasks: Sequence[AlfworldTask], policy: Policy, chain_dir: Path, *,
                 env: AlfworldEnv, name: str = "full", seed: int = 0,
                 after_task: AfterTask | None = None,
                 before_task: BeforeTask | None = None) -> None:
        self.tasks = list(tasks)
        self.policy = policy
        self.dir = chain_dir
        self.env = env
        self.name = name
        self.after_task = after_task
        self.before_task = before_task
        _check_manifest(chain_dir, ChainManifest(
            name=name, seed=seed, policy=policy.name, max_steps=env.max_steps,
            order_digest=order_digest(tasks), task_ids=[t.task_id for t in tasks],
            compaction=policy.compaction if isinstance(policy, ModelPolicy) else None))
        self.records = load_records(chain_dir)
        for position, record in self.records.items():
            expected = self.tasks[position].task_id if position < len(self.tasks) else None
            if record.task_id != expected:
                raise ChainMismatchError(f"{_record_path(chain_dir, position)} records "
                                         f"{record.task_id}, expected {expected}")

    def pending(self) -> list[int]:
        """The positions without a record, in chain order."""
        return [p for p in range(len(self.tasks)) if p not in self.records]

    async def play(self, position: int) -> Trajectory:
        """Play the task at ``position`` (hooks around it) and write its record."""
        task = self.tasks[position]
        if self.before_task is not None:
            await self.before_task(position, task)
        record = await run_episode(self.env, task, self.policy)
        write_record(_record_path(self.dir, position), record)
        self.records[position] = record
        if self.after_task is not None:
            await self.after_task(position, record)
        return record

    def in_order(self) -> list[Trajectory]:
        """The records so far, in chain order."""
        return [self.records[p] for p in sorted(self.records)]


async def run_chain(tasks: Sequence[AlfworldTask], policy: Policy, chain_dir: Path, *,
                    env: AlfworldEnv, name: str = "full", seed: int = 0,
                    after_task: AfterTask | None = None,
                    before_task: BeforeTask | None = None) -> list[Trajectory]:
    """Run every task of a chain in order, resuming from the records already in ``chain_dir``.

    Args:
        tasks: the chain's tasks in order (e.g. :func:`full_chain_order`).
        policy: picks the actions; its ``name`` is pinned in the manifest.
        chain_dir: the chain's folder (created if missing).
        env: the environment to play in; its step cap is pinned in the manifest.
        name: the chain's name in the manifest (``full``, ``three-0``, ...).
        seed: the seed the order came from, pinned in the manifest.
        after_task: awaited after each newly finished task with its position and
            record (a memory builder hooks in here); not called for skipped tasks.
        before_task: awaited before each task that is about to be played, with its
            position and task (retrieval hooks in here); not called for skipped tasks.

    Returns:
        The records of all tasks, in chain order.

    Raises:
        ChainMismatchError: when ``chain_dir`` holds a run of another chain.
    """
    player = ChainPlayer(tasks, policy, chain_dir, env=env, name=name, seed=seed,
                         after_task=after_task, before_task=before_task)
    for position in player.pending():
        await player.play(position)
    return player.in_order()


def success_by_family(records: Sequence[Trajectory]) -> dict[str, tuple[int, int]]:
    """(successes, attempts) per family, in order of first appearance."""
    tally: dict[str, tuple[int, int]] = {}
    for record in records:
        won, tried = tally.get(record.family, (0, 0))
        tally[record.family] = (won + record.success, tried + 1)
    return tally
