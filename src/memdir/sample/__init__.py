"""A short sample conversation written for memdir, and the small store built from it.

Used by ``memdir demo`` and ``memdir init --sample``, and by tests and docs that
need a realistic store without a model or network. The conversation loads into
:mod:`memdir.conversation`'s model; ``Conversation``, ``Session``, ``Turn`` and
``parse_locator`` are re-exported from there for older callers.
"""

from memdir.conversation import Conversation, Session, Turn, parse_locator
from memdir.sample._build import SESSIONS_NOTE, build_sample_store, check_locators, sample_notes
from memdir.sample._conversation import load_sample_conversation
from memdir.sample._curated import NOTES, Note

__all__ = [
    "NOTES",
    "SESSIONS_NOTE",
    "Conversation",
    "Note",
    "Session",
    "Turn",
    "build_sample_store",
    "check_locators",
    "load_sample_conversation",
    "parse_locator",
    "sample_notes",
]
