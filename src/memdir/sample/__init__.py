"""A short sample conversation written for memdir, and the small store built from it.

Used by ``memdir demo`` and ``memdir init --sample``, and by tests and docs that
need a realistic store without a model or network. The conversation loads into
:mod:`memdir.conversation`'s model.
"""

from memdir.sample._build import SESSIONS_NOTE, build_sample_store, check_locators, sample_notes
from memdir.sample._conversation import load_sample_conversation
from memdir.sample._curated import NOTES, Note

__all__ = [
    "NOTES",
    "SESSIONS_NOTE",
    "Note",
    "build_sample_store",
    "check_locators",
    "load_sample_conversation",
    "sample_notes",
]
