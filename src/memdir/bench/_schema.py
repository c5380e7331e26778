"""Benchmark records around the shared conversation model: questions, evidence, datasets.

Conversations, sessions and turns are :mod:`memdir.conversation`'s models; each
loader turns its benchmark's own file format into them and into the questions
here, so builders, chunking and grading never look at a raw file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memdir.conversation import Benchmark, Conversation

__all__ = [
    "Benchmark",
    "Dataset",
    "DatasetError",
    "EvidenceNote",
    "Question",
]


class DatasetError(ValueError):
    """A benchmark file is missing, unreadable or not in the expected format.

    The message names the file and what is wrong with it.
    """

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class Question(BaseModel):
    """A benchmark question about one conversation."""

    model_config = ConfigDict(frozen=True)

    id: str
    benchmark: Benchmark
    conversation_id: str
    text: str
    answer: str | None
    """The gold answer as text (integers converted); None only for adversarial items without one."""
    category: int
    category_name: str
    evidence: list[str] = Field(default_factory=list)
    """Locators of the supporting turns, normalised; see :class:`EvidenceNote`."""
    evidence_raw: list[str] = Field(default_factory=list)
    """The evidence strings exactly as the benchmark wrote them."""
    options: list[str] = Field(default_factory=list)
    """The choices of a multiple-choice question, each starting with ``(a)``..``(d)``."""
    order: int | None = None
    """Evaluation order: 1-based position among the conversation's evaluated questions."""
    adversarial_answer: str | None = None
    end_index: int | None = None
    """PersonaMem: the question sees the first ``end_index`` messages of its context."""
    meta: dict[str, str] = Field(default_factory=dict)

    @property
    def evaluated(self) -> bool:
        """Whether the question is in the evaluated set (LoCoMo's adversarial items are not)."""
        return self.order is not None


class EvidenceNote(BaseModel):
    """What a loader did to one evidence string that was not a plain turn id."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    raw: str
    locators: list[str]
    action: Literal["normalised", "unresolved", "dropped"]
    detail: str


class Dataset(BaseModel):
    """Conversations and questions loaded from one benchmark's files."""

    benchmark: Benchmark
    source: str
    conversations: list[Conversation]
    questions: list[Question]
    notes: list[EvidenceNote] = Field(default_factory=list)

    def conversation(self, conversation_id: str) -> Conversation:
        """The conversation with this id.

        Raises:
            KeyError: No such conversation (the message lists the ids there are).
        """
        for conversation in self.conversations:
            if conversation.id == conversation_id:
                return conversation
        known = ", ".join(c.id for c in self.conversations)
        raise KeyError(f"no conversation {conversation_id!r}; this dataset has: {known}")

    def questions_for(self, conversation_id: str, *, evaluated_only: bool = True) -> list[Question]:
        """The questions about one conversation, in file order.

        Args:
            conversation_id: The conversation.
            evaluated_only: Leave out questions outside the evaluated set
                (LoCoMo's adversarial category).
        """
        return [
            q
            for q in self.questions
            if q.conversation_id == conversation_id and (q.evaluated or not evaluated_only)
        ]
