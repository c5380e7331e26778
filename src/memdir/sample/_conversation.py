"""The shipped sample conversation: a typed view of ``conversation.json``.

The conversation is ours (written for memdir, not taken from any benchmark):
two friends, four dated sessions, sixty turns, with facts that change between
sessions so that a store built from it holds both current and past entries.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Conversation", "Session", "Turn", "load_sample_conversation", "parse_locator"]

_LOCATOR = re.compile(r"^S(\d+)T(\d+)$")


class Turn(BaseModel):
    """One utterance."""

    model_config = ConfigDict(frozen=True)

    speaker: str
    text: str


class Session(BaseModel):
    """A dated conversation session; turns are numbered from 1 inside it."""

    model_config = ConfigDict(frozen=True)

    id: int = Field(ge=1)
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    turns: list[Turn] = Field(min_length=1)


class Conversation(BaseModel):
    """A multi-session conversation between named speakers."""

    model_config = ConfigDict(frozen=True)

    title: str = ""
    speakers: list[str] = Field(min_length=1)
    sessions: list[Session] = Field(min_length=1)

    def session(self, number: int) -> Session:
        """The session with id ``number``.

        Raises:
            KeyError: No such session.
        """
        for session in self.sessions:
            if session.id == number:
                return session
        raise KeyError(f"the conversation has no session {number}")

    def turn(self, locator: str) -> Turn:
        """The turn a source locator such as ``S2T5`` points at (session 2, turn 5).

        Raises:
            KeyError: The locator is malformed or points past the conversation.
        """
        session_id, turn_no = parse_locator(locator)
        turns = self.session(session_id).turns
        if not 1 <= turn_no <= len(turns):
            raise KeyError(f"session {session_id} has {len(turns)} turns, not {turn_no}")
        return turns[turn_no - 1]

    def turn_count(self) -> int:
        """Turns over all sessions."""
        return sum(len(s.turns) for s in self.sessions)


def parse_locator(locator: str) -> tuple[int, int]:
    """Split ``S2T5`` (with or without brackets) into ``(2, 5)``.

    Raises:
        KeyError: The text is not a locator.
    """
    match = _LOCATOR.match(locator.strip("[]"))
    if match is None:
        raise KeyError(f"{locator!r} is not a source locator like S2T5")
    return int(match.group(1)), int(match.group(2))


@lru_cache(maxsize=1)
def load_sample_conversation() -> Conversation:
    """Read the sample conversation shipped inside the package."""
    text = resources.files("memdir.sample").joinpath("conversation.json").read_text("utf-8")
    return Conversation.model_validate(json.loads(text))
