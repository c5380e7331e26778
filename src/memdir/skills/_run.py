"""Runs the cells of a skill-setting grid: chains of tasks with a memory variant.

Per task the order is fixed and leak-free: the variant retrieves from the store
as the earlier attempts left it, the execution policy plays the task, the
variant integrates the attempt, the store is snapshotted (one git commit per
task, ``task NNN <task id>`` with NNN counted from 1) and audited, and a
:class:`StepRecord` is written.

A cell's folder holds ``cell.json`` and one folder per chain, each with the chain
runner's ``chain.json`` and ``tasks/NNN.json`` plus ``steps/NNN.json`` (the step
records), ``steps/NNN.served.json`` (what retrieval served, written before the
attempt) and ``store/`` (the store with its git history). A rerun resumes: the
chain runner skips recorded attempts, and an attempt whose integration was cut
short is integrated again from its recorded trajectory over the store restored
to the previous task's snapshot.

Each chain's unrecorded attempts run as the samples of one inspect_ai eval
(:mod:`memdir.skills._evals`), logs in ``<output>/logs`` and listed in the chain
folder's ``evals.json``, so ``inspect view`` shows them as it shows study cells.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, get_args

from inspect_ai.model import Model
from pydantic import Field

from memdir.agents import EpisodeRecord, PriceTable, Usage
from memdir.progress import Progress, progress
from memdir.runs import (
    NO_MODEL,
    EvalFailed,
    RunRecord,
    eval_failure,
    note_eval,
    read_record,
    write_record,
)
from memdir.skills._audit import audit_gate, audit_schema
from memdir.skills._chain import ChainPlayer, load_records
from memdir.skills._config import EXPERT, Cell, RunConfig
from memdir.skills._env import AlfworldEnv
from memdir.skills._evals import eval_chain
from memdir.skills._execution import ModelPolicy
from memdir.skills._expert import ExpertPolicy
from memdir.skills._families import AlfworldTask, full_chain_order, three_chain_orders
from memdir.skills._policy import Policy
from memdir.skills._trajectory import Trajectory
from memdir.skills._variants import Served, Variant, make_variant
from memdir.store import Store
from memdir.store.history import History

__all__ = [
    "ROLES",
    "STEP_SCHEMA",
    "Role",
    "ServedRecord",
    "StepRecord",
    "chains_for",
    "load_steps",
    "log_dir",
    "run_cell",
]

STEP_SCHEMA = 1
Models = Mapping[str, Model]


class ServedRecord(RunRecord):
    """What retrieval served before one attempt (and, once played, the execution record)."""

    version: int = STEP_SCHEMA
    position: int
    task_id: str
    guidance: str = ""
    paths: list[str] = Field(default_factory=list)
    retrieval: EpisodeRecord | None = None
    execution: EpisodeRecord | None = None


Role = Literal["retrieval", "execution", "curation"]
ROLES: tuple[Role, ...] = get_args(Role)
"""The model roles of a step, in the order they act."""


class StepRecord(RunRecord):
    """One finished task of a chain with its memory work, the store after it, and times.

    Each role's episode is kept whole; rounds, tool calls, usage and cost derive
    from those episodes (cost by a price table, at report time).
    """

    version: int = STEP_SCHEMA
    position: int
    task_id: str
    family: str
    success: bool
    steps_used: int
    served_paths: list[str] = Field(default_factory=list)
    guidance_chars: int = 0
    retrieval: EpisodeRecord | None = None
    execution: EpisodeRecord | None = None
    curation: EpisodeRecord | None = None
    gate_refusals: list[str] = Field(default_factory=list)
    store_files: int = 0
    store_bytes: int = 0
    schema_findings: int = 0
    gate_findings: int = 0
    snapshot: str | None = None
    reset_seconds: float = 0.0
    episode_seconds: float = 0.0
    memory_seconds: float = 0.0

    def episode(self, role: Role) -> EpisodeRecord | None:
        """The episode one role played for the task (None: the role did not run)."""
        found: EpisodeRecord | None = getattr(self, role)
        return found

    def episodes(self) -> list[EpisodeRecord]:
        """Every episode of the step, in role order."""
        return [e for role in ROLES if (e := self.episode(role)) is not None]

    def usage(self, role: Role | None = None) -> Usage:
        """Tokens one role (or, without ``role``, every role) spent on the task."""
        episodes = self.episodes() if role is None else [e for e in [self.episode(role)] if e]
        return sum((e.usage for e in episodes), Usage())

    def rounds(self, role: Role) -> int:
        """Model calls one role made (0 where it did not run)."""
        found = self.episode(role)
        return found.rounds if found is not None else 0

    def cost(self, role: Role, prices: PriceTable) -> float | None:
        """Dollars one role spent by ``prices``: 0 where it made no paid call, None if unpriced."""
        found = self.episode(role)
        if found is None or found.zero_cost_baseline:
            return 0.0
        return prices.cost(found.model, found.usage)


def chains_for(protocol: str, tasks: Sequence[AlfworldTask], seed: int,
               limit: int | None = None,
               task_ids: Sequence[str] | None = None) -> list[tuple[str, list[AlfworldTask]]]:
    """The named chains of a protocol, each cut to its first ``limit`` tasks if given.

    With ``task_ids``, each chain keeps only those tasks (in its own order); an id
    that is not in the split is an error.
    """
    if task_ids is not None:
        known = {t.task_id for t in tasks}
        unknown = [t for t in task_ids if t not in known]
        if unknown:
            raise ValueError(f"task ids not in the split: {', '.join(unknown)}")
    if protocol == "full-chain":
        chains = [("full", full_chain_order(tasks, seed))]
    elif protocol == "three-chain":
        chains = [(f"three-{i}", c) for i, c in enumerate(three_chain_orders(tasks, seed))]
    else:
        raise ValueError(f"unknown protocol {protocol!r}; use full-chain or three-chain")
    if task_ids is not None:
        wanted = set(task_ids)
        chains = [(name, [t for t in chain if t.task_id in wanted]) for name, chain in chains]
    return [(name, chain[:limit] if limit else chain) for name, chain in chains if chain]


def _steps_dir(chain_dir: Path) -> Path:
    return chain_dir / "steps"


def load_steps(chain_dir: Path) -> dict[int, StepRecord]:
    """The step records of a chain folder, by position."""
    found = {}
    for path in sorted(_steps_dir(chain_dir).glob("[0-9][0-9][0-9].json")):
        found[int(path.stem)] = read_record(path, StepRecord)
    return found


def _store_size(store: Store | None) -> tuple[int, int]:
    if store is None:
        return 0, 0
    files = store.files()
    return len(files), sum(len(store.read(p).encode("utf-8")) for p in files)


_TASK_SNAPSHOT = re.compile(r"task \d{3} (?P<task_id>.+)")
"""A task's snapshot message: ``task NNN <task id>``. NNN is the task's place in the
chain from 1, as the chain page counts (runs written before counted from 0), so the
message is matched by its task id, which a chain holds once."""


def _snapshot_message(position: int, task_id: str) -> str:
    return f"task {position + 1:03d} {task_id}"


def _restore(history: History, after: StepRecord | None) -> None:
    """Put the live store back to the snapshot taken after the task ``after`` recorded.

    With ``after`` None, that is the empty store the chain started with. The step's
    snapshot is found by the commit its record names, or else (a record without one)
    by the task id in the snapshot's message, whichever way its number counts. The
    store is made to hold exactly that snapshot's files (:meth:`History.restore`:
    whatever was written since goes, whatever its name); the history is not changed.
    """
    steps = list(reversed(history.steps()))
    if after is None:
        step = next((s for s in steps if s.message.startswith("start")), None)
        wanted = "start: empty store"
    else:
        step = next((s for s in steps if after.snapshot and s.commit == after.snapshot), None)
        if step is None:
            step = next((s for s in steps if (m := _TASK_SNAPSHOT.fullmatch(s.message))
                         and m["task_id"] == after.task_id), None)
        wanted = f"the one after task {after.task_id} (position {after.position})"
    if step is None:
        raise RuntimeError(f"no snapshot {wanted} in {history.root}; the chain "
                           "folder is damaged, start it again in a fresh folder")
    history.restore(step)


class _ChainRun:
    """One chain of one cell: the hooks around the chain runner."""

    def __init__(self, chain_dir: Path, variant: Variant, policy: Policy) -> None:
        self.dir = chain_dir
        self.variant = variant
        self.policy = policy
        self.store = variant.store
        self.history = History(self.store) if self.store is not None else None
        if self.history is not None:
            self.history.init()
            if not self.history.steps():
                self.history.snapshot("start: empty store")
        self.memory_seconds: dict[int, float] = {}
        self.shown: Progress | None = None
        """The task counter of the chain (set while its tasks are played)."""

    def _served_path(self, position: int) -> Path:
        return _steps_dir(self.dir) / f"{position:03d}.served.json"

    async def before(self, position: int, task: AlfworldTask) -> None:
        began = time.perf_counter()
        served = await self.variant.retrieve(position, task)
        self.memory_seconds[position] = time.perf_counter() - began
        record = ServedRecord(position=position, task_id=task.task_id, guidance=served.guidance,
                              paths=served.paths, retrieval=served.record)
        write_record(self._served_path(position), record)
        if isinstance(self.policy, ModelPolicy):
            self.policy.begin(task.goal, served.guidance)

    async def after(self, position: int, trajectory: Trajectory) -> None:
        path = self._served_path(position)
        record = read_record(path, ServedRecord)
        if isinstance(self.policy, ModelPolicy):
            record.execution = self.policy.take_record()
            write_record(path, record)
        await self.finish(position, trajectory, record)
        if self.shown is not None:
            outcome = "won" if trajectory.success else "failed"
            self.shown.step(f"{self.dir.name}: {trajectory.task_id} {outcome}")

    async def finish(self, position: int, trajectory: Trajectory, served: ServedRecord) -> None:
        began = time.perf_counter()
        done = await self.variant.integrate(
            position, trajectory, Served(served.guidance, served.paths, served.retrieval))
        snapshot = None
        if self.history is not None:
            snapshot = self.history.snapshot(_snapshot_message(position, trajectory.task_id))
        files, size = _store_size(self.store)
        step = StepRecord(
            position=position, task_id=trajectory.task_id, family=trajectory.family,
            success=trajectory.success, steps_used=trajectory.steps_used,
            served_paths=served.paths, guidance_chars=len(served.guidance),
            retrieval=served.retrieval, execution=served.execution, curation=done.record,
            gate_refusals=done.refusals, store_files=files, store_bytes=size,
            schema_findings=len(audit_schema(self.store)) if self.store else 0,
            gate_findings=len(audit_gate(self.store)) if self.store else 0,
            snapshot=snapshot, reset_seconds=trajectory.reset_seconds,
            episode_seconds=trajectory.wall_seconds,
            memory_seconds=self.memory_seconds.pop(position, 0.0) + time.perf_counter() - began)
        write_record(_steps_dir(self.dir) / f"{position:03d}.json", step)

    async def repair(self) -> None:
        """Integrate again any recorded attempt whose step record is missing."""
        steps = load_steps(self.dir)
        for position, trajectory in sorted(load_records(self.dir).items()):
            if position in steps:
                continue
            path = self._served_path(position)
            if not path.is_file():
                raise RuntimeError(f"{path} is missing; the attempt at position {position} "
                                   "cannot be integrated again. Start the chain afresh.")
            if self.history is not None:
                earlier = [p for p in steps if p < position]
                _restore(self.history, steps[max(earlier)] if earlier else None)
            served = read_record(path, ServedRecord)
            await self.finish(position, trajectory, served)
            steps = load_steps(self.dir)


def _policy(cell: Cell, config: RunConfig, env: AlfworldEnv, models: Models) -> Policy:
    if cell.execution == EXPERT:
        return ExpertPolicy(env, seed=config.seed)
    return ModelPolicy(models.get(cell.execution, cell.execution), compaction=config.compaction)


def log_dir(output: Path) -> Path:
    """Where a run's inspect_ai eval logs go: ``inspect view --log-dir`` this folder."""
    return output / "logs"


async def run_cell(config: RunConfig, cell: Cell, tasks: Sequence[AlfworldTask],
                   env: AlfworldEnv, models: Models | None = None) -> Path:
    """Run every chain of one cell (resuming what is recorded); returns the cell's folder.

    Each chain's unrecorded tasks are played as the samples of one inspect_ai eval
    (logs in ``<output>/logs``, listed per chain in ``evals.json``). Inside
    :func:`memdir.progress.reporting` a line per finished task shows the chain's
    task n/N, the time elapsed and an estimate of the time left.

    Args:
        config: The run's settings (seed, limit, output folder, episode_k, compaction).
        cell: The cell to run.
        tasks: The split's tasks (``list_tasks``).
        env: The environment (``facts=True`` for the expert).
        models: Model objects standing in for model names (e.g. scripted test models).

    Raises:
        EvalFailed: An attempt failed (a model call, the environment); what ran before
            is recorded and a rerun resumes there.
        KeyboardInterrupt: The run was interrupted; a rerun resumes it.
    """
    models = models or {}
    cell_dir = config.output / cell.key
    write_record(cell_dir / "cell.json", cell)
    for name, chain in chains_for(cell.protocol, tasks, config.seed, config.limit,
                                  config.task_ids):
        chain_dir = cell_dir / name
        store = None if cell.variant == "none" else Store(chain_dir / "store", create=True)
        variant = make_variant(
            cell.variant, store, k=config.episode_k, harness=cell.harness,
            curator=models.get(cell.curator, cell.curator) if cell.curator else None,
            retriever=models.get(cell.retriever, cell.retriever) if cell.retriever else None)
        policy = _policy(cell, config, env, models)
        run = _ChainRun(chain_dir, variant, policy)
        await run.repair()
        player = ChainPlayer(chain, policy, chain_dir, env=env, name=name, seed=config.seed,
                             after_task=run.after, before_task=run.before)
        if not player.pending():
            continue
        model = NO_MODEL if cell.execution == EXPERT else models.get(cell.execution,
                                                                     cell.execution)
        with progress(len(chain), "task", done=len(chain) - len(player.pending())) as shown:
            run.shown = shown
            log = await eval_chain(cell, player, model, log_dir(config.output))
        note_eval(config.output, chain_dir / "evals.json", log)
        failure = eval_failure(log, "position")
        if log.status == "cancelled":
            raise KeyboardInterrupt(failure)
        if failure is not None:
            raise EvalFailed(f"{cell.key}, chain {name}: {failure}; rerun to resume")
    return cell_dir
