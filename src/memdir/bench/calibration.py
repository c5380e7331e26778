"""Calibrating the correctness judge on hand-labelled answers before a run.

memdir ships a small set of answers to LoCoMo questions from conversations other
than the held-out test conversation, each labelled 1 or 0 by its authors
(``data/judge-calibration.yaml``; the file holds question ids, our answers and our
labels, never LoCoMo's text: questions and golds come from the user's own
``locomo10.json``). :func:`calibrate` has a judge model grade every item with the
same prompt and role a study uses and reports how often it agrees with the labels,
with Cohen's kappa (agreement beyond what the judge's and the labels' base rates
would give by chance) and every disagreement, so a judge can be checked, and its
template and settings pinned, before it grades a study.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml
from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict, Field

from memdir.agents import RoleConfig, Usage
from memdir.bench._schema import Dataset
from memdir.bench.judge import JUDGE_ROLE, JudgeError, judge_correctness

__all__ = [
    "CalibrationItem",
    "CalibrationReport",
    "Disagreement",
    "calibrate",
    "load_calibration_set",
]


class CalibrationItem(BaseModel):
    """One hand-labelled answer to a benchmark question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    answer: str
    label: int = Field(ge=0, le=1)
    why: str = ""


class Disagreement(BaseModel):
    """An item the judge graded otherwise than its label (or could not grade)."""

    question_id: str
    answer: str
    label: int
    judged: int | None
    reason: str


class CalibrationReport(BaseModel):
    """How well a judge agrees with the labelled set."""

    model: str
    items: int
    agreed: int
    true_positive: int
    true_negative: int
    false_positive: int
    false_negative: int
    judge_errors: int
    kappa: float | None
    """Cohen's kappa over the graded items; None when it is undefined (one class only)."""
    disagreements: list[Disagreement] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    @property
    def agreement(self) -> float:
        """Share of items graded as labelled (an unparseable reply counts as a miss)."""
        return self.agreed / self.items if self.items else 0.0


def load_calibration_set() -> list[CalibrationItem]:
    """The labelled answers shipped with memdir."""
    text = resources.files("memdir.bench").joinpath("data/judge-calibration.yaml").read_text(
        encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return [CalibrationItem.model_validate(item) for item in data["items"]]


def _kappa(tp: int, tn: int, fp: int, fn: int) -> float | None:
    n = tp + tn + fp + fn
    if n == 0:
        return None
    observed = (tp + tn) / n
    chance = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    return None if chance == 1 else (observed - chance) / (1 - chance)


async def calibrate(model: Model | str, dataset: Dataset,
                    items: list[CalibrationItem] | None = None,
                    role: RoleConfig | None = None) -> CalibrationReport:
    """Grade every labelled answer with the judge and compare with the labels.

    Args:
        model: The judge model.
        dataset: The benchmark the items' question ids name (LoCoMo for the shipped set).
        items: The labelled answers (the shipped set if None).
        role: The judge's settings (its defaults if None), as a study would run it.

    Raises:
        KeyError: An item names a question the dataset does not hold.
        AgentError: The judge model failed after retries.
    """
    items = load_calibration_set() if items is None else items
    questions = {q.id: q for q in dataset.questions}
    missing = sorted({i.question_id for i in items} - set(questions))
    if missing:
        raise KeyError(f"{len(missing)} calibration item(s) name questions that "
                       f"{dataset.source} does not hold, e.g. {missing[0]}; is it locomo10.json?")
    counts = {"tp": 0, "tn": 0, "fp": 0, "fn": 0}
    disagreements: list[Disagreement] = []
    usage = Usage()
    errors = 0
    name = model if isinstance(model, str) else str(model)
    for item in items:
        question = questions[item.question_id]
        try:
            grade = await judge_correctness(model, question.text, question.answer or "",
                                            item.answer, role or JUDGE_ROLE)
        except JudgeError as exc:
            errors += 1
            disagreements.append(Disagreement(question_id=item.question_id, answer=item.answer,
                                              label=item.label, judged=None, reason=str(exc)))
            continue
        usage = usage + grade.record.usage
        name = grade.record.model
        key = ("t" if grade.correct == item.label else "f") + ("p" if grade.correct else "n")
        counts[key] += 1
        if grade.correct != item.label:
            disagreements.append(Disagreement(question_id=item.question_id, answer=item.answer,
                                              label=item.label, judged=grade.correct,
                                              reason=grade.reason))
    return CalibrationReport(
        model=name, items=len(items), agreed=counts["tp"] + counts["tn"],
        true_positive=counts["tp"], true_negative=counts["tn"], false_positive=counts["fp"],
        false_negative=counts["fn"], judge_errors=errors,
        kappa=_kappa(counts["tp"], counts["tn"], counts["fp"], counts["fn"]),
        disagreements=disagreements, usage=usage)
