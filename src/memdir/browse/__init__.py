"""See a memory: a local web browser for stores, their histories and study runs.

``memdir browse STORE|RUN`` serves server-rendered pages on a loopback address,
behind a token of its own: the store's taxonomy tree, its files rendered with references and
source locators linked, grep and ranked search, lint defects and health alarms;
the history of snapshots with diffs and growth curves; and a run's cells,
questions and citations. It reads through the store, history, metrics, tools,
study and skills APIs and never writes. See ``docs/browse.md``.
"""

from memdir.browse._app import SECURITY_HEADERS, TokenGate, browse_app, serve
from memdir.browse._checks import INLINE_CHECK_FILES
from memdir.browse._sources import (
    BrowsedStore,
    BrowseError,
    Catalog,
    ConversationRef,
    open_target,
)
from memdir.browse._tree import HEADINGS_FILES

__all__ = [
    "HEADINGS_FILES",
    "INLINE_CHECK_FILES",
    "SECURITY_HEADERS",
    "BrowseError",
    "BrowsedStore",
    "Catalog",
    "ConversationRef",
    "TokenGate",
    "browse_app",
    "open_target",
    "serve",
]
