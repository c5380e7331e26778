"""Errors the store raises when a request cannot be honoured.

Every message is written for whoever made the request, often a model: it names
what was wrong and what to do instead. Tools turn these into tool results; they
are never a sign of a bug in memdir itself.
"""

from __future__ import annotations

__all__ = [
    "ConflictError",
    "FileExistsInStoreError",
    "FileTooLargeError",
    "NotFoundError",
    "PathError",
    "StoreError",
]


class StoreError(Exception):
    """A request the store refused; the message says how to fix it."""


class PathError(StoreError):
    """A path that does not name a place inside the store."""


class NotFoundError(StoreError):
    """The path is valid but nothing lives there."""


class FileExistsInStoreError(StoreError):
    """The destination of a create or rename is already taken."""


class FileTooLargeError(StoreError):
    """Content above the store's per-file size cap."""


class ConflictError(StoreError):
    """The file changed since the writer last read it (a lost update averted)."""
