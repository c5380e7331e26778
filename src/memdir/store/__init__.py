"""The memory store: markdown files with frontmatter under a root agents see as ``/memories``.

This package never imports a model, an agent or the command line. The header
models (:class:`Frontmatter`, :class:`SkillMetadata`, :class:`SkillSource`) are
pydantic classes imported on first use, so opening and searching a store skips
building them.
"""

from typing import TYPE_CHECKING, Any

from memdir.store._conflicts import (
    ConflictBlock,
    conflict_alarms,
    conflict_findings,
    conflict_followup,
    conflict_note,
    conflicted_paths,
    find_blocks,
    has_conflict,
    listing_mark,
)
from memdir.store._document import Document, load_document, parse_document
from memdir.store._entries import Entries, Folder, Found, FoundType
from memdir.store._errors import (
    ConflictError,
    FileExistsInStoreError,
    FileTooLargeError,
    NotFoundError,
    PathError,
    StoreError,
)
from memdir.store._frontmatter import (
    DESCRIPTION_MAX_CHARS,
    MAX_NESTING,
    MAX_NODES,
    Defect,
    entry_sources,
    parse_file,
    render_file,
    slugify,
    validate_skill_metadata,
)
from memdir.store._lint import Finding, check_xref, fix_store, lint_store
from memdir.store._markdown import Heading, Section, XRef, find_section, headings, sections, xrefs
from memdir.store._paths import (
    ANY_NAME,
    FILE_MODE,
    FOLDER_MODE,
    MARKDOWN,
    MAX_DEPTH,
    MAX_PATH_BYTES,
    ROOT,
    NamePolicy,
    StorePath,
    atomic_write,
    check_new_path,
    resolve,
    to_virtual,
)
from memdir.store._sources import SourcesSection, body_without_sources, find_sources_section
from memdir.store._store import (
    ANY_VERSION,
    DEFAULT_MAX_FILE_BYTES,
    AnyVersion,
    Entry,
    EntryKind,
    Store,
    digest_text,
)
from memdir.store._tree import Listed, Node, NodeKind

if TYPE_CHECKING:
    from memdir.store._models import Frontmatter, SkillMetadata, SkillSource


def __getattr__(name: str) -> Any:
    if name in ("Frontmatter", "SkillMetadata", "SkillSource"):
        from memdir.store import _models

        return getattr(_models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "ANY_NAME",
    "ANY_VERSION",
    "AnyVersion",
    "ConflictBlock",
    "DEFAULT_MAX_FILE_BYTES",
    "DESCRIPTION_MAX_CHARS",
    "ROOT",
    "ConflictError",
    "Defect",
    "Document",
    "Entries",
    "Entry",
    "EntryKind",
    "FileExistsInStoreError",
    "FILE_MODE",
    "FOLDER_MODE",
    "FileTooLargeError",
    "Finding",
    "Folder",
    "Found",
    "FoundType",
    "Frontmatter",
    "Heading",
    "Listed",
    "MARKDOWN",
    "MAX_DEPTH",
    "MAX_NESTING",
    "MAX_NODES",
    "MAX_PATH_BYTES",
    "NamePolicy",
    "Node",
    "NodeKind",
    "NotFoundError",
    "PathError",
    "Section",
    "SourcesSection",
    "SkillMetadata",
    "SkillSource",
    "Store",
    "StoreError",
    "StorePath",
    "XRef",
    "atomic_write",
    "body_without_sources",
    "check_new_path",
    "check_xref",
    "conflict_alarms",
    "conflict_findings",
    "conflict_followup",
    "conflict_note",
    "conflicted_paths",
    "digest_text",
    "entry_sources",
    "find_blocks",
    "find_section",
    "find_sources_section",
    "fix_store",
    "has_conflict",
    "headings",
    "lint_store",
    "listing_mark",
    "load_document",
    "parse_document",
    "parse_file",
    "render_file",
    "resolve",
    "sections",
    "slugify",
    "to_virtual",
    "validate_skill_metadata",
    "xrefs",
]
