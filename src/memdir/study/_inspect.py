"""A study cell as an inspect_ai eval: one sample per unanswered question.

The solver does the whole per-question work of the study (:meth:`CellRun.answer`:
ask, replay the reads, grade, judge) and writes the question's record into the
run folder; the scorer reports the record's token F1 or option match. Every model
call the search agent (and the judge) makes runs inside the sample, so ``inspect
view --log-dir <run>/logs`` shows each question's transcript, and the records the
reports read are the same answers, never a second run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import Model, ModelOutput
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from memdir.bench import Question
from memdir.runs import run_eval
from memdir.study._answer import CellRun, question_text
from memdir.study._records import Grades

__all__ = ["cell_task", "eval_cell", "study_answer", "study_grade"]

AnsweredFn = Callable[[Question], None]
"""Called after a question's record is written."""

@solver
def study_answer(run: CellRun, answered: AnsweredFn | None = None):  # type: ignore[no-untyped-def]
    """Answer, grade and record the sample's question in the cell (the eval's whole work)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        question = Question.model_validate(state.metadata["question"])
        record = await run.answer(question, bool(state.metadata["judged"]))
        run.write(record, question)
        state.output = ModelOutput.from_content(record.episode.model, record.answer)
        state.metadata["grades"] = record.grades.model_dump(mode="json")
        state.completed = True
        if answered is not None:
            answered(question)
        return state

    return solve


@scorer(metrics=[mean()])
def study_grade():  # type: ignore[no-untyped-def]
    """The recorded grade: token F1, or 1/0 for a multiple-choice option match."""

    async def score(state: TaskState, target: Target) -> Score:
        grades = Grades.model_validate(state.metadata["grades"])
        if grades.f1 is not None:
            value, how = grades.f1, "token F1"
        else:
            value, how = float(bool(grades.option_correct)), "option match"
        return Score(value=value, answer=state.output.completion, explanation=how,
                     metadata=grades.model_dump(mode="json", exclude_none=True))

    return score


def _sample(question: Question, judged: bool) -> Sample:
    return Sample(input=question_text(question), target=question.answer or "", id=question.id,
                  metadata={"question": question.model_dump(mode="json"), "judged": judged})


def cell_task(run: CellRun, questions: list[tuple[int, Question]],
              answered: AnsweredFn | None = None) -> Task:
    """The inspect_ai task of one cell, over ``(index in the cell, question)`` pairs."""
    samples = [_sample(q, run.judged(i)) for i, q in questions]
    return Task(dataset=MemoryDataset(samples, name=run.cell.key),
                solver=study_answer(run, answered), scorer=study_grade(),
                name=run.cell.key,
                metadata={"cell": run.cell.model_dump(mode="json"),
                          "search_role": run.role.model_dump(mode="json"),
                          "toolset_digest": run.tools.digest() if run.tools else None})


async def eval_cell(run: CellRun, questions: list[tuple[int, Question]], log_dir: Path,
                    answered: AnsweredFn | None = None) -> EvalLog:
    """Evaluate ``questions`` of the cell on its search model; the log goes to ``log_dir``.

    inspect_ai's own console display is off during the eval (the caller reports
    progress through ``answered``); whatever display the process had is restored.

    Raises:
        KeyboardInterrupt: The eval was interrupted before it wrote a log (Ctrl-C).
    """
    model: Model = run.model(run.cell.search_model)
    return await run_eval(cell_task(run, questions, answered), model, log_dir,
                          f"the eval of {run.cell.key}", max_samples=run.config.concurrency,
                          tags=[run.config.name], metadata={"study": run.config.name})
