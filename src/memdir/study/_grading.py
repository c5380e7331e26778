"""Grading a cell's answers: token F1 or option match always, the LLM judge when configured."""

from __future__ import annotations

from inspect_ai.model import Model

from memdir.agents import PriceTable, Usage
from memdir.bench import Question, answer_f1, grade_option
from memdir.bench.judge import JudgeError, judge_attribution, judge_correctness, judge_role
from memdir.store import Store
from memdir.study._config import JudgeSettings
from memdir.study._records import Grades

__all__ = ["grade_answer", "judge_answer"]


def grade_answer(question: Question, answer: str) -> Grades:
    """The model-free grade: exact option match for PersonaMem, token F1 otherwise."""
    if question.options:
        return Grades(option_correct=grade_option(question, answer))
    return Grades(f1=answer_f1(question, answer))


async def judge_answer(
    grades: Grades, question: Question, answer: str, store: Store | None,
    judge: JudgeSettings, model: Model | str, prices: PriceTable,
) -> Grades:
    """Add the judge's correctness (and attribution, where there is a store) to ``grades``.

    A multiple-choice question (PersonaMem) keeps its option-match correctness and
    gets only the attribution grade, as in the paper.

    A reply the judge gets wrong (not the JSON asked for) is kept as ``judge_error``
    on the grade, so the question counts as unjudged rather than failing the cell.

    Raises:
        memdir.agents.AgentError: The judge model failed after retries.
    """
    # Multiple choice is graded by option match, never by the judge; its attribution is.
    by_judge = not question.options and question.answer is not None
    attribute = judge.attribution and store is not None
    if not by_judge and not attribute:
        return grades
    changes: dict[str, object] = {}
    role = judge_role(**_settings(judge))
    usage = Usage()
    name = model if isinstance(model, str) else str(model)
    try:
        if by_judge:
            assert question.answer is not None
            correct = await judge_correctness(model, question.text, question.answer, answer,
                                              role)
            usage = usage + correct.record.usage
            name = correct.record.model
            changes.update(judge_correct=correct.correct, judge_reason=correct.reason)
        if attribute:
            assert store is not None
            attr_role = judge_role(prompt="judge-attribution", **_settings(judge))
            attr = await judge_attribution(model, store, question.text, answer, attr_role)
            usage = usage + attr.record.usage
            name = attr.record.model
            changes["attribution"] = {
                "citation_correctness": attr.citation_correctness,
                "citation_relevance": attr.citation_relevance,
                "aggregation": attr.aggregation,
            }
    except JudgeError as exc:
        changes["judge_error"] = str(exc)
    changes.update(judge_usage=usage, judge_cost=prices.cost(name, usage))
    return grades.model_copy(update=changes)


def _settings(judge: JudgeSettings) -> dict[str, object]:
    found: dict[str, object] = {}
    if judge.effort is not None:
        found["reasoning_effort"] = judge.effort
    if judge.max_tokens is not None:
        found["max_tokens"] = judge.max_tokens
    return found
