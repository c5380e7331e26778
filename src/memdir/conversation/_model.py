"""The one model of a conversation: turns with locators, numbered sessions, conversations.

Every source (the benchmarks' files, the user-facing JSON turns format, plain
text, the shipped sample) is loaded into these models, so chunking, rendering
and store building never look at a raw file. Each turn carries a *locator*,
the inline source tag a memory keeps beside a fact: ``S{session}T{turn}`` for
dialogue, ``B{block}M{message}`` for block-structured sources such as PersonaMem.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "LOCATOR",
    "LOCATOR_GROUP",
    "LOCATOR_IN_TEXT",
    "LOCATOR_PATTERN",
    "Benchmark",
    "Conversation",
    "LocatorKind",
    "Session",
    "Turn",
    "block_locator",
    "parse_locator",
    "turn_locator",
]

Benchmark = str
"""The name of the benchmark a conversation comes from (``memdir.bench.BENCHMARKS`` lists
them; this package sits below the benchmarks and does not restate their names)."""

LocatorKind = Literal["session", "block"]
"""``session`` locators read ``S3T7``; ``block`` locators read ``B2M5``."""

LOCATOR_PATTERN = r"S\d+T\d+|B\d+M\d+"
"""The bare locator syntax that :func:`turn_locator` and :func:`block_locator` write,
for readers that build a larger pattern around it (no groups, no anchors)."""
LOCATOR = re.compile(rf"^(?:{LOCATOR_PATTERN})$")
"""A whole locator: ``S3T7`` (session 3, turn 7) or ``B2M5`` (block 2, message 5)."""
LOCATOR_IN_TEXT = re.compile(rf"\b({LOCATOR_PATTERN})\b")
"""A locator standing as a word of free text (a memory line, a tool result)."""
LOCATOR_GROUP = re.compile(
    rf"\[\s*((?:{LOCATOR_PATTERN})(?:\s*[,;]\s*(?:{LOCATOR_PATTERN}))*)\s*\]"
)
"""A bracketed source tag as memories carry it: ``[S3T7]``, or several as ``[S3T7, S3T9]``
(commas or semicolons); group 1 holds the locators, :data:`LOCATOR_IN_TEXT` splits them."""


def turn_locator(session: int, turn: int) -> str:
    """The locator of turn ``turn`` (1-based) of session ``session``."""
    return f"S{session}T{turn}"


def block_locator(block: int, message: int) -> str:
    """The locator of message ``message`` (1-based) of block ``block``."""
    return f"B{block}M{message}"


def parse_locator(locator: str) -> tuple[int, int]:
    """Split ``S2T5`` or ``B2M5`` (with or without brackets) into ``(2, 5)``.

    Raises:
        KeyError: The text is not a locator.
    """
    body = locator.strip("[]")
    if LOCATOR.match(body) is None:
        raise KeyError(f"{locator!r} is not a source locator like S2T5 or B2M5")
    first, second = body[1:].replace("M", "T").split("T")
    return int(first), int(second)


class Turn(BaseModel):
    """One utterance (or block message) with its locator."""

    model_config = ConfigDict(frozen=True)

    locator: str = Field(pattern=LOCATOR.pattern)
    speaker: str = ""
    """Who spoke; empty for a plain-text line that names no speaker."""
    text: str
    source_id: str | None = None
    """The source's own id for this turn (``D3:7``), or the message index in a context."""
    image_caption: str | None = None
    """Caption of a photo shared with the turn, when the source gives one."""
    time: dt.datetime | None = None
    """When the turn was sent, where the source dates single turns (REALTALK)."""


class Session(BaseModel):
    """A contiguous stretch of the conversation (a block, for block sources)."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    """The session's number, as its locators use it (numbered from 1 by every loader)."""
    date: dt.datetime | dt.date | None = None
    """When it took place: a ``datetime``, a ``date`` when only the day is known, or None."""
    date_text: str | None = None
    """The date exactly as the source wrote it."""
    turns: list[Turn]

    @property
    def speakers(self) -> list[str]:
        """Named speakers of this session in order of first appearance."""
        seen: dict[str, None] = {}
        for turn in self.turns:
            if turn.speaker:
                seen.setdefault(turn.speaker, None)
        return list(seen)


class Conversation(BaseModel):
    """A multi-session conversation, from a benchmark or from a user."""

    model_config = ConfigDict(frozen=True)

    id: str = ""
    benchmark: Benchmark | None = None
    """The benchmark it comes from; None for a user's or the sample's conversation."""
    title: str = ""
    speakers: list[str] = Field(default_factory=list)
    sessions: list[Session]
    meta: dict[str, str] = Field(default_factory=dict)

    @property
    def turns(self) -> list[Turn]:
        """Every turn in conversation order."""
        return [turn for session in self.sessions for turn in session.turns]

    @property
    def locator_kind(self) -> LocatorKind:
        """``block`` if the turns carry ``B..M..`` locators, else ``session``."""
        first = next((t.locator for s in self.sessions for t in s.turns), "S")
        return "block" if first.startswith("B") else "session"

    def locators(self) -> set[str]:
        """Every locator that occurs in the conversation."""
        return {turn.locator for session in self.sessions for turn in session.turns}

    def turn_count(self) -> int:
        """Turns over all sessions."""
        return sum(len(s.turns) for s in self.sessions)

    def session(self, number: int) -> Session:
        """The session with index ``number``.

        Raises:
            KeyError: No such session.
        """
        for session in self.sessions:
            if session.index == number:
                return session
        raise KeyError(f"the conversation has no session {number}")

    def turn(self, locator: str) -> Turn:
        """The turn a locator such as ``S2T5`` (brackets allowed) points at.

        Raises:
            KeyError: The locator is malformed or points at no turn.
        """
        number, position = parse_locator(locator)
        turns = self.session(number).turns
        wanted = locator.strip("[]")
        for turn in turns:
            if turn.locator == wanted:
                return turn
        raise KeyError(f"session {number} has {len(turns)} turns and no {wanted} (turn {position})")

    def with_locators(self, kind: LocatorKind) -> Conversation:
        """A copy whose turns are renumbered by position with ``kind`` locators.

        Returns the conversation itself when its locators are already of that kind.
        """
        if kind == self.locator_kind:
            return self
        make = turn_locator if kind == "session" else block_locator
        sessions = [
            s.model_copy(update={"turns": [
                t.model_copy(update={"locator": make(s.index, n)})
                for n, t in enumerate(s.turns, start=1)
            ]})
            for s in self.sessions
        ]
        return self.model_copy(update={"sessions": sessions})
