"""Known-defective gold answers, so a report can be computed with and without them.

The catalog is data (``data/defective_gold.json``): each entry names a question by
benchmark, conversation and evaluation order, and keeps the question text so a
loaded dataset can be checked against it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict

from memdir.bench._schema import Benchmark, Dataset, Question

__all__ = [
    "DefectiveGold",
    "check_defective_gold",
    "defective_gold",
    "is_defective",
    "split_defective",
]


class DefectiveGold(BaseModel):
    """One question whose gold answer the transcript contradicts."""

    model_config = ConfigDict(frozen=True)

    benchmark: Benchmark
    conversation_id: str
    order: int
    category: int
    question: str
    problem: str

    @property
    def key(self) -> tuple[str, str, int]:
        """(benchmark, conversation, evaluation order)."""
        return (self.benchmark, self.conversation_id, self.order)


@lru_cache(maxsize=1)
def _catalog() -> tuple[DefectiveGold, ...]:
    text = resources.files("memdir.bench").joinpath("data/defective_gold.json").read_text("utf-8")
    data = json.loads(text)
    return tuple(DefectiveGold.model_validate(e) for e in data["entries"])


def defective_gold() -> list[DefectiveGold]:
    """The shipped catalog."""
    return list(_catalog())


def _key(question: Question) -> tuple[str, str, int] | None:
    if question.order is None:
        return None
    return (question.benchmark, question.conversation_id, question.order)


def is_defective(question: Question) -> bool:
    """Whether the catalog lists this question."""
    key = _key(question)
    return key is not None and any(entry.key == key for entry in _catalog())


def split_defective(questions: Iterable[Question]) -> tuple[list[Question], list[Question]]:
    """Split questions into (kept, defective) by the catalog, keeping their order."""
    kept: list[Question] = []
    defective: list[Question] = []
    for question in questions:
        (defective if is_defective(question) else kept).append(question)
    return kept, defective


def check_defective_gold(dataset: Dataset) -> list[str]:
    """Check the catalog's entries for this dataset's benchmark against its questions.

    Returns:
        One message per entry that names no question, or a question with other
        text or category; empty when the catalog matches the data.
    """
    by_key = {k: q for q in dataset.questions if (k := _key(q)) is not None}
    known = {c.id for c in dataset.conversations}
    problems = []
    for entry in _catalog():
        if entry.benchmark != dataset.benchmark or entry.conversation_id not in known:
            continue
        question = by_key.get(entry.key)
        if question is None:
            problems.append(f"{entry.conversation_id} has no question at order {entry.order}")
        elif question.text != entry.question or question.category != entry.category:
            problems.append(
                f"{entry.conversation_id} order {entry.order} is {question.text!r} "
                f"(category {question.category}), not {entry.question!r}"
            )
    return problems
