"""Build the sample store from the sample conversation, deterministically and offline."""

from __future__ import annotations

from pathlib import Path

from memdir.conversation import LOCATOR_GROUP, LOCATOR_IN_TEXT, Conversation
from memdir.sample._conversation import load_sample_conversation, session_day
from memdir.sample._curated import NOTES, Note
from memdir.store import Frontmatter, Store, render_file

__all__ = ["SESSIONS_NOTE", "build_sample_store", "check_locators", "sample_notes"]

SESSIONS_NOTE = "/memories/conversation/sessions.md"


def check_locators(conversation: Conversation, notes: tuple[Note, ...]) -> None:
    """Make sure every ``[SxTy]`` in the notes points at a turn of the conversation.

    Raises:
        ValueError: A locator points at nothing (the message names the file and locator).
    """
    for note in notes:
        tags = LOCATOR_GROUP.findall(note.body)
        for locator in (found for tag in tags for found in LOCATOR_IN_TEXT.findall(tag)):
            try:
                conversation.turn(locator)
            except KeyError as exc:
                raise ValueError(f"{note.path} cites [{locator}]: {exc.args[0]}") from None


def _sessions_note(conversation: Conversation, notes: tuple[Note, ...]) -> Note:
    lines = ["# Sessions", ""]
    for session in conversation.sessions:
        day = session_day(session)
        speakers = sorted({t.speaker for t in session.turns})
        lines.append(f"## Session {session.index}")
        lines.append("")
        lines.append(
            f"- {day.isoformat()} ({day:%A}), {' and '.join(speakers)}, "
            f"{len(session.turns)} turns."
        )
        prefix = f"[S{session.index}T"
        citing = [n.path for n in notes if prefix in n.body]
        if citing:
            lines.append("- Facts from it are filed in: " + ", ".join(citing))
        lines.append("")
    first = session_day(conversation.sessions[0]).isoformat()
    last = session_day(conversation.sessions[-1]).isoformat()
    return Note(
        SESSIONS_NOTE,
        f"When each of the {len(conversation.sessions)} sessions took place ({first} to {last}) "
        "and where its facts are filed",
        "\n".join(lines),
    )


def sample_notes(conversation: Conversation | None = None) -> tuple[Note, ...]:
    """Every file of the sample store: the curated notes plus the derived session index."""
    conv = conversation or load_sample_conversation()
    check_locators(conv, NOTES)
    return (*NOTES, _sessions_note(conv, NOTES))


def build_sample_store(dest: Path) -> Store:
    """Write the sample store into ``dest`` and return it.

    The store holds one file per person, event and plan, with source locators
    beside each fact, past facts kept as dated entries, and cross-references
    between files; a derived index says when each session took place.

    Args:
        dest: The store's folder. Created if missing; it must hold no memory files yet.

    Raises:
        ValueError: ``dest`` already holds markdown files (the sample never overwrites).
    """
    store = Store(dest, create=True)
    existing = store.files()
    if existing:
        raise ValueError(
            f"{dest} already holds {len(existing)} memory file(s); "
            "build the sample into an empty folder."
        )
    for note in sample_notes():
        name = note.path.rsplit("/", 1)[-1].removesuffix(".md")
        store.create(note.path, render_file(Frontmatter(name=name, description=note.description),
                                            note.body))
    return store
