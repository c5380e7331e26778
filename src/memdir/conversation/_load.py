"""Loaders of the user-facing conversation formats: JSON turns and plain text.

The JSON turns format is ``{"speakers": [...], "sessions": [{"id", "date",
"turns": [{"speaker", "text"}]}]}`` (an optional ``"title"`` too). Turns are
numbered from 1 inside their session, which gives each its locator. A ``date``
in ISO form (``2024-01-05`` or ``2024-01-05T10:30``) becomes a ``date`` or
``datetime``; any other text is kept as written. Plain text is one session:
each non-empty line is a turn, ``Name: text`` naming its speaker.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memdir.conversation._model import (
    Conversation,
    LocatorKind,
    Session,
    Turn,
    block_locator,
    turn_locator,
)

__all__ = ["JSON_SHAPE", "conversation_from_json", "load_conversation", "parse_plain_text"]

JSON_SHAPE = '{"speakers": [...], "sessions": [{"id", "date", "turns": [{"speaker", "text"}]}]}'
"""The JSON turns format, as error messages show it."""

_SPEAKER = re.compile(r"^([A-Z][\w .'-]{0,40}?):\s+(.*)$")
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class _JsonTurn(BaseModel):
    model_config = ConfigDict(frozen=True)

    speaker: str = ""
    text: str


class _JsonSession(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int = Field(ge=0)
    date: str = ""
    turns: list[_JsonTurn]


class _JsonConversation(BaseModel):
    model_config = ConfigDict(frozen=True)

    title: str = ""
    speakers: list[str] = Field(default_factory=list)
    sessions: list[_JsonSession] = Field(min_length=1)


def _parse_date(text: str) -> datetime | date | None:
    """An ISO day as a ``date``, an ISO timestamp as a ``datetime``, anything else None."""
    text = text.strip()
    try:
        if _ISO_DAY.match(text):
            return date.fromisoformat(text)
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _session(raw: _JsonSession, locator: LocatorKind) -> Session:
    make = turn_locator if locator == "session" else block_locator
    turns = [
        Turn(locator=make(raw.id, n), speaker=t.speaker, text=t.text)
        for n, t in enumerate(raw.turns, start=1)
    ]
    return Session(index=raw.id, date=_parse_date(raw.date), date_text=raw.date or None,
                   turns=turns)


def conversation_from_json(
    data: Any, *, id: str = "", locator: LocatorKind = "session"
) -> Conversation:
    """A conversation from parsed JSON in the JSON turns format.

    Args:
        data: The parsed JSON.
        id: The id to give the conversation (the file's stem, for a file).
        locator: ``session`` numbers turns ``S1T2``; ``block`` numbers them ``B1M2``.

    Raises:
        ValueError: The data is not in the JSON turns format (the message says where).
    """
    try:
        raw = _JsonConversation.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        raise ValueError(f"{where}: {first['msg']}. Expected {JSON_SHAPE}") from None
    return Conversation(id=id, title=raw.title, speakers=raw.speakers,
                        sessions=[_session(s, locator) for s in raw.sessions])


def load_conversation(source: str | Path, *, locator: LocatorKind = "session") -> Conversation:
    """Read a conversation file: ``.json`` in the JSON turns format, anything else as plain text.

    Args:
        source: The file.
        locator: ``session`` numbers turns ``S1T2``; ``block`` numbers them ``B1M2``.

    Raises:
        ValueError: The file cannot be read, or its JSON does not have the expected shape.
    """
    path = Path(source).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    if path.suffix.lower() != ".json":
        return parse_plain_text(text, id=path.stem, locator=locator)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    try:
        return conversation_from_json(data, id=path.stem, locator=locator)
    except ValueError as exc:
        raise ValueError(f"{path} is not a conversation: {exc}") from None


def parse_plain_text(
    text: str, *, id: str = "", locator: LocatorKind = "session"
) -> Conversation:
    """A plain-text transcript as a one-session conversation (session 1).

    Raises:
        ValueError: The text has no non-empty line.
    """
    make = turn_locator if locator == "session" else block_locator
    turns: list[Turn] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        match = _SPEAKER.match(line)
        speaker, said = (match.group(1), match.group(2)) if match else ("", line)
        turns.append(Turn(locator=make(1, len(turns) + 1), speaker=speaker, text=said))
    if not turns:
        raise ValueError("the conversation is empty: give at least one line of text")
    speakers = sorted({t.speaker for t in turns if t.speaker})
    return Conversation(id=id, speakers=speakers, sessions=[Session(index=1, turns=turns)])
