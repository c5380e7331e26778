"""A skill chain as an inspect_ai eval: one sample per task attempt, in chain order.

Each sample plays one position of the chain through :class:`ChainPlayer` (the
variant's retrieval, the attempt, its integration into the store, the step
record), so ``inspect view --log-dir <run>/logs`` shows a chain's attempts as it
shows a study cell's questions, with every model call the retriever, the
execution agent and the curator made. The chain keeps its own records and
resume logic: a rerun's eval holds only the positions without a record. The
samples' work runs strictly in chain order (:class:`memdir.runs.InOrder`), since
each attempt reads the store the earlier ones left.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import Model, ModelOutput
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from memdir.runs import InOrder, run_eval
from memdir.skills._chain import ChainPlayer
from memdir.skills._config import Cell

__all__ = ["chain_task", "eval_chain"]


@solver
def play_position(player: ChainPlayer, gate: InOrder):  # type: ignore[no-untyped-def]
    """Play the sample's chain position when its turn comes (the sample's whole work)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        position = int(state.metadata["position"])
        async with gate.turn(position):
            trajectory = await player.play(position)
        state.output = ModelOutput.from_content(
            player.policy.name, f"{trajectory.ended} after {trajectory.steps_used} steps")
        state.metadata["success"] = trajectory.success
        state.completed = True
        return state

    return solve


@scorer(metrics=[mean()])
def task_success():  # type: ignore[no-untyped-def]
    """1 when the attempt won its game, else 0."""

    async def score(state: TaskState, target: Target) -> Score:
        won = bool(state.metadata["success"])
        return Score(value=float(won), answer=state.output.completion,
                     explanation="won" if won else "not won")

    return score


def chain_task(cell: Cell, player: ChainPlayer, positions: list[int]) -> Task:
    """The eval of one chain of a cell over its unrecorded ``positions``."""
    samples = [Sample(input=player.tasks[p].goal, id=f"{p:03d}",
                      metadata={"position": p, "task_id": player.tasks[p].task_id,
                                "family": player.tasks[p].family})
               for p in positions]
    name = f"{cell.key}__{player.name}"
    return Task(dataset=MemoryDataset(samples, name=name),
                solver=play_position(player, InOrder(positions)), scorer=task_success(),
                name=name, metadata={"cell": cell.model_dump(mode="json"),
                                     "chain": player.name, "policy": player.policy.name})


async def eval_chain(cell: Cell, player: ChainPlayer, model: Model | str,
                     log_dir: Path) -> EvalLog:
    """Play the chain's unrecorded positions as one eval; returns its log.

    Every sample is admitted at once (each waits for its turn), none is retried
    (the chain resumes from its records instead), and the first error ends the eval.

    Raises:
        KeyboardInterrupt: The eval was interrupted before it wrote a log (Ctrl-C).
    """
    positions = player.pending()
    return await run_eval(chain_task(cell, player, positions), model, log_dir,
                          f"the chain {player.name} of {cell.key}",
                          max_samples=max(1, len(positions)), retry_on_error=0)
