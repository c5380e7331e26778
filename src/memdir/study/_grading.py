"""Grading a cell's answers: token F1 or option match always, the LLM judge when configured.

The judge a run uses is pinned by :func:`judge_pin`: its model, the settings of
each of its two calls, and a hash of each prompt template it sends; the run's
manifest carries the pin, and a re-judged record set carries its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict

from memdir.agents import PriceTable, RoleConfig, Usage
from memdir.bench import Question, answer_f1, grade_option
from memdir.bench.judge import (
    ATTRIBUTION_PROMPT,
    CITED_CHARS,
    CITED_VIEW,
    CORRECTNESS_PROMPT,
    JudgeError,
    judge_attribution,
    judge_correctness,
    judge_role,
    template_text,
)
from memdir.store import Store
from memdir.study._config import JudgeSettings
from memdir.study._records import Grades

__all__ = ["JudgePin", "grade_answer", "judge_answer", "judge_grades", "judge_pin",
           "judge_roles", "without_judge"]

_JUDGE_FIELDS = ("judge_correct", "judge_reason", "attribution", "judge_cost", "judge_usage",
                 "judge_error")
"""The fields of :class:`Grades` the judge writes (the rest need no model)."""


def grade_answer(question: Question, answer: str) -> Grades:
    """The model-free grade: exact option match for PersonaMem, token F1 otherwise."""
    if question.options:
        return Grades(option_correct=grade_option(question, answer))
    return Grades(f1=answer_f1(question, answer))


def without_judge(grades: Grades) -> Grades:
    """``grades`` with every judge field cleared (the model-free grades kept)."""
    return grades.model_copy(update=dict.fromkeys(_JUDGE_FIELDS))


def judge_roles(judge: JudgeSettings) -> dict[str, RoleConfig]:
    """The role of each judge call (``correctness``, ``attribution``) under ``judge``."""
    settings: dict[str, object] = {}
    if judge.effort is not None:
        settings["reasoning_effort"] = judge.effort
    if judge.max_tokens is not None:
        settings["max_tokens"] = judge.max_tokens
    return {"correctness": judge_role(**settings),
            "attribution": judge_role(prompt=ATTRIBUTION_PROMPT, **settings)}


class JudgePin(BaseModel):
    """One judge as a run used it: model, call settings, template hashes, and one hash of all."""

    model_config = ConfigDict(frozen=True)

    model: str
    attribution: bool
    limit: int | None
    cited_chars: int
    """Most characters of one citation the attribution judge is shown."""
    cited_view: str | None = None
    """How a cited file is shown (:data:`memdir.bench.judge.CITED_VIEW`); None in pins
    written before the view was windowed (a cut from the top of the file)."""
    roles: dict[str, dict[str, Any]]
    """Each call's role as run (prompt, round budget, output cap, effort, temperature)."""
    templates: dict[str, str]
    """SHA-256 of each prompt template sent (blocks included, fields as placeholders)."""
    hash: str
    """SHA-256 over everything above: equal hashes, the same judge."""


def judge_pin(judge: JudgeSettings, templates: Mapping[str, str] | None = None
              ) -> JudgePin | None:
    """Pin the judge of ``judge`` (None when the run has no judge).

    Args:
        judge: The config's judge settings.
        templates: The template text of each judge prompt (default: the shipped
            prompts, see :func:`memdir.bench.judge.template_text`).
    """
    if judge.model is None:
        return None
    used = [CORRECTNESS_PROMPT] + ([ATTRIBUTION_PROMPT] if judge.attribution else [])
    texts = dict(templates) if templates is not None else {n: template_text(n) for n in used}
    roles = judge_roles(judge)
    body: dict[str, Any] = {
        "model": judge.model, "attribution": judge.attribution, "limit": judge.limit,
        "cited_chars": CITED_CHARS, "cited_view": CITED_VIEW,
        "roles": {k: r.model_dump(mode="json") for k, r in roles.items()
                  if k == "correctness" or judge.attribution},
        "templates": {n: hashlib.sha256(texts[n].encode("utf-8")).hexdigest() for n in used},
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()
    return JudgePin(**body, hash=digest)


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
    return await judge_grades(grades, question=question.text, gold=question.answer,
                              multiple_choice=bool(question.options), answer=answer,
                              store=store, judge=judge, model=model, prices=prices)


async def judge_grades(
    grades: Grades, *, question: str, gold: str | None, multiple_choice: bool, answer: str,
    store: Store | None, judge: JudgeSettings, model: Model | str, prices: PriceTable,
) -> Grades:
    """:func:`judge_answer` from a question's parts (what a record keeps of it).

    Raises:
        memdir.agents.AgentError: The judge model failed after retries.
    """
    # Multiple choice is graded by option match, never by the judge; its attribution is.
    by_judge = not multiple_choice and gold is not None
    attribute = judge.attribution and store is not None
    if not by_judge and not attribute:
        return grades
    changes: dict[str, object] = {}
    roles = judge_roles(judge)
    usage = Usage()
    name = model if isinstance(model, str) else str(model)
    try:
        if by_judge:
            assert gold is not None
            correct = await judge_correctness(model, question, gold, answer,
                                              roles["correctness"])
            usage = usage + correct.record.usage
            name = correct.record.model
            changes.update(judge_correct=correct.correct, judge_reason=correct.reason)
        if attribute:
            assert store is not None
            attr = await judge_attribution(model, store, question, answer, roles["attribution"])
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
