"""A memory file read whole: header, body, structure and references in one value."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from memdir.store._frontmatter import Defect, parse_file
from memdir.store._markdown import Heading, Section, XRef, headings, sections, xrefs
from memdir.store._store import Store

if TYPE_CHECKING:
    from memdir.store._models import Frontmatter

__all__ = ["Document", "load_document", "parse_document"]


@dataclass(slots=False)
class Document:
    """A parsed memory file. Line numbers count from the top of the whole file."""

    path: str
    text: str
    frontmatter: Frontmatter | None
    body: str
    body_line: int
    defects: list[Defect] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The file stem (``alice`` for ``/memories/people/alice.md``)."""
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")

    @property
    def description(self) -> str:
        """The frontmatter description, or an empty string if there is none."""
        return self.frontmatter.description if self.frontmatter else ""

    @cached_property
    def headings(self) -> list[Heading]:
        """The body's headings, in order."""
        return headings(self.body, self.body_line)

    @cached_property
    def sections(self) -> list[Section]:
        """The body's sections, in order, each with its heading path."""
        return sections(self.body, self.body_line)

    @cached_property
    def xrefs(self) -> list[XRef]:
        """Cross-references in the body (line numbers relative to the whole file)."""
        offset = self.body_line - 1
        return [XRef(x.target, x.section, x.line + offset) for x in xrefs(self.body)]


def parse_document(path: str, text: str) -> Document:
    """Parse text as the memory file at ``path`` (a virtual path)."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    parsed = parse_file(text, stem)
    return Document(
        path, text, parsed.frontmatter, parsed.body, parsed.body_line, parsed.defects
    )


def load_document(store: Store, path: str) -> Document:
    """Read and parse one file of a store."""
    virtual = store.resolve(path, "file").virtual
    return parse_document(virtual, store.read(virtual))
