"""A study cell as an inspect_ai task, so ``inspect view`` shows its transcripts.

Each evaluated question is a sample; the solver runs the same search agent as
:func:`memdir.study.run_study` (``memdir.agents.ask`` with the cell's prompt and
tools) on the eval's model, so every model call, with its tool calls and tool
results, lands in the sample's transcript. Scorers give token F1 (LoCoMo,
REALTALK) or option match (PersonaMem). The run folder's records stay the source
of the study's tables; the inspect log is for reading transcripts.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, eval_async
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from memdir.agents import PriceTable, ask
from memdir.bench import Question
from memdir.store import Store
from memdir.study._config import Cell, StudyConfig
from memdir.study._grading import grade_answer
from memdir.study._roles import ASK_VARIANT, search_role
from memdir.study._stores import BuilderUnavailable, build_store, cell_input

__all__ = ["cell_task", "eval_cell", "eval_cells", "study_grade", "study_search"]


@solver
def study_search(cell: Cell, config: StudyConfig, store: Store | None):  # type: ignore[no-untyped-def]
    """Answer the sample's question from the cell's store with the eval's model."""
    role = search_role(cell, config)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        answer = await ask(store, state.input_text, get_model(),
                           variant=ASK_VARIANT[cell.variant], role=role)
        state.output = ModelOutput.from_content(answer.model, answer.text)
        state.metadata["citations"] = [c.model_dump(mode="json", exclude={"content"})
                                       for c in answer.citations]
        state.metadata["usage"] = answer.usage.model_dump(mode="json")
        state.completed = True
        return state

    return solve


@scorer(metrics=[mean()])
def study_grade():  # type: ignore[no-untyped-def]
    """Token F1 against the gold answer, or exact option match for multiple choice."""
    async def score(state: TaskState, target: Target) -> Score:
        question = Question.model_validate(state.metadata["question"])
        grades = grade_answer(question, state.output.completion)
        value = grades.f1 if grades.f1 is not None else float(bool(grades.option_correct))
        return Score(value=value, answer=state.output.completion,
                     explanation="token F1" if grades.f1 is not None else "option match")

    return score


def _sample(question: Question) -> Sample:
    text = question.text
    if question.options:
        text += "\n\nOptions:\n" + "\n".join(question.options)
    return Sample(input=text, target=question.answer or "", id=question.id,
                  metadata={"question": question.model_dump(mode="json")})


async def cell_task(cell: Cell, config: StudyConfig, data_dir: Path, store_root: Path
                    ) -> Task:
    """The inspect_ai task of one cell (its store is built under ``store_root``).

    Raises:
        memdir.study.BuilderUnavailable: The variant needs a model-driven builder.
    """
    inputs = cell_input(cell, data_dir)
    store, _ = await build_store(cell, inputs.conversation, store_root, config, {},
                                 PriceTable.load(config.prices))
    return Task(dataset=MemoryDataset([_sample(q) for q in inputs.questions], name=cell.key),
                solver=study_search(cell, config, store), scorer=study_grade(), name=cell.key)


async def eval_cells(config: StudyConfig, data_dir: Path, store_root: Path, log_dir: Path
                     ) -> list[tuple[Cell, EvalLog | str]]:
    """Run every cell of ``config`` as an inspect_ai eval; a cell that cannot run gives its reason.

    Raises:
        memdir.agents.AgentError: A model call failed after retries.
    """
    results: list[tuple[Cell, EvalLog | str]] = []
    for cell in config.cells():
        try:
            results.append((cell, await eval_cell(cell, config, data_dir, store_root, log_dir)))
        except BuilderUnavailable as exc:
            results.append((cell, str(exc)))
    return results


async def eval_cell(cell: Cell, config: StudyConfig, data_dir: Path, store_root: Path,
                    log_dir: Path) -> EvalLog:
    """Run one cell as an inspect_ai eval on its search model; the log goes to ``log_dir``."""
    task = await cell_task(cell, config, data_dir, store_root)
    [log] = await eval_async(task, model=cell.search_model, log_dir=str(log_dir),
                             max_samples=config.concurrency,
                             fail_on_error=True)
    return log
