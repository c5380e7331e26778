"""The shipped sample conversation, loaded into the one conversation model.

The conversation is ours (written for memdir, not taken from any benchmark):
two friends, four dated sessions, sixty turns, with facts that change between
sessions so that a store built from it holds both current and past entries.
``conversation.json`` is in the JSON turns format ``memdir ingest`` reads.
"""

from __future__ import annotations

import datetime as dt
import json
from functools import lru_cache
from importlib import resources

from memdir.conversation import Conversation, Session, conversation_from_json

__all__ = ["load_sample_conversation", "session_day"]


def session_day(session: Session) -> dt.date:
    """The day a sample session took place.

    Raises:
        ValueError: The session has no ISO day (``2025-03-02``) as its date.
    """
    if session.date is None or isinstance(session.date, dt.datetime):
        raise ValueError(
            f"sample session {session.index} is dated {session.date_text!r}; "
            "give it a day such as 2025-03-02"
        )
    return session.date


@lru_cache(maxsize=1)
def load_sample_conversation() -> Conversation:
    """Read the sample conversation shipped inside the package.

    Raises:
        ValueError: The shipped file is malformed (a session without a day or turns).
    """
    text = resources.files("memdir.sample").joinpath("conversation.json").read_text("utf-8")
    conversation = conversation_from_json(json.loads(text), id="sample")
    for session in conversation.sessions:
        session_day(session)
        if not session.turns:
            raise ValueError(f"sample session {session.index} has no turns")
    return conversation
