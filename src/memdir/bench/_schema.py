"""One schema for every conversational benchmark: conversations, sessions, turns, questions.

Each loader turns its benchmark's own file format into these models, so builders,
chunking and grading never look at a raw file. Turns carry a *locator*: the inline
source tag a memory keeps beside each fact, ``S{session}T{turn}`` for dialogue
benchmarks and ``B{block}M{message}`` for PersonaMem.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "LOCATOR",
    "Benchmark",
    "Conversation",
    "Dataset",
    "DatasetError",
    "EvidenceNote",
    "Question",
    "Session",
    "Turn",
    "block_locator",
    "turn_locator",
]

Benchmark = Literal["locomo", "realtalk", "personamem"]

LOCATOR = re.compile(r"^(?:S(\d+)T(\d+)|B(\d+)M(\d+))$")
"""A locator: ``S3T7`` (session 3, turn 7) or ``B2M5`` (block 2, message 5)."""


def turn_locator(session: int, turn: int) -> str:
    """The locator of turn ``turn`` (1-based) of session ``session`` (1-based)."""
    return f"S{session}T{turn}"


def block_locator(block: int, message: int) -> str:
    """The locator of message ``message`` (1-based) of PersonaMem block ``block``."""
    return f"B{block}M{message}"


class DatasetError(ValueError):
    """A benchmark file is missing, unreadable or not in the expected format.

    The message names the file and what is wrong with it.
    """

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class Turn(BaseModel):
    """One utterance (or PersonaMem message) with its locator."""

    model_config = ConfigDict(frozen=True)

    locator: str = Field(pattern=LOCATOR.pattern)
    speaker: str
    text: str
    source_id: str | None = None
    """The benchmark's own id for this turn (``D3:7``), or the message index in a context."""
    image_caption: str | None = None
    """Caption of a photo shared with the turn, when the benchmark gives one."""
    time: datetime | None = None
    """When the turn was sent, where the benchmark dates single turns (REALTALK)."""


class Session(BaseModel):
    """A contiguous stretch of the conversation, numbered from 1."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=1)
    date: datetime | None = None
    date_text: str | None = None
    """The date exactly as the benchmark wrote it."""
    turns: list[Turn]

    @property
    def speakers(self) -> list[str]:
        """Speakers of this session in order of first appearance."""
        seen: dict[str, None] = {}
        for turn in self.turns:
            seen.setdefault(turn.speaker, None)
        return list(seen)


class Conversation(BaseModel):
    """A multi-session conversation of one benchmark."""

    model_config = ConfigDict(frozen=True)

    id: str
    benchmark: Benchmark
    speakers: list[str]
    sessions: list[Session]
    meta: dict[str, str] = Field(default_factory=dict)

    @property
    def turns(self) -> list[Turn]:
        """Every turn in conversation order."""
        return [turn for session in self.sessions for turn in session.turns]

    def locators(self) -> set[str]:
        """Every locator that occurs in the conversation."""
        return {turn.locator for session in self.sessions for turn in session.turns}


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
