"""Citations in answers: finding them, and checking each against the store.

Three forms are recognised, as the search prompts teach them:
``[/memories/a.md]``, ``[/memories/a.md:L10-15]`` (or ``:L12``) and
``[/memories/a.md > # Heading > ## Sub]``. :func:`format_citation` writes them
(the offline policy cites through it) and :data:`CITATION` reads them back. A
cited path may hold spaces and any letter, but no ``:``, ``]`` or ``>`` (they
end the path) and no ``.md`` inside it before its end, so that
``[/memories/a.md, /memories/b.md]`` is not read as one path.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from memdir.store import ROOT, Store, StoreError, find_section

__all__ = [
    "CITATION",
    "Citation",
    "find_citations",
    "format_citation",
    "render_cited",
    "resolve_citations",
]

CITATION = re.compile(
    rf"\[(?P<path>{ROOT}(?:/(?:(?!\.md[^\]/:\n])[^\]\n:>/])+)*?\.md)"
    r"(?::L(?P<start>\d+)(?:-L?(?P<end>\d+))?)?"
    r"(?P<section>(?:\s*>\s*[^\]>]+)+)?\]"
)
"""A citation as :func:`format_citation` writes it (``L10-L15`` is read as ``L10-15``)."""
_MAX_SHOWN = 4000


class Citation(BaseModel):
    """One citation of an answer, and what it resolved to."""

    model_config = ConfigDict(frozen=True)

    raw: str
    path: str
    start: int | None = None
    end: int | None = None
    section: tuple[str, ...] = ()
    resolved: bool = False
    problem: str | None = None
    content: str | None = None


def format_citation(
    path: str, start: int | None = None, end: int | None = None, section: tuple[str, ...] = ()
) -> str:
    """A citation of ``path``: whole, of lines ``start``..``end``, or of a section.

    Args:
        path: The cited file, e.g. ``/memories/people/alice.md``.
        start: The first cited line; None cites the file or ``section``.
        end: The last cited line (``start`` when None).
        section: Heading steps, e.g. ``("# Alice", "## Work")``.
    """
    if start is not None:
        lines = f"L{start}" if end is None or end == start else f"L{start}-{end}"
        return f"[{path}:{lines}]"
    return "[" + " > ".join((path, *section)) + "]"


def find_citations(text: str) -> list[Citation]:
    """Every citation in ``text``, in order, duplicates removed (not yet resolved)."""
    found: dict[str, Citation] = {}
    for match in CITATION.finditer(text):
        start = int(match.group("start")) if match.group("start") else None
        end = int(match.group("end")) if match.group("end") else start
        section = tuple(
            part.strip() for part in (match.group("section") or "").split(">") if part.strip()
        )
        raw = match.group(0)
        found.setdefault(
            raw, Citation(raw=raw, path=match.group("path"), start=start, end=end, section=section)
        )
    return list(found.values())


def _resolve(store: Store, citation: Citation) -> Citation:
    try:
        text = store.read(citation.path)
    except StoreError as exc:
        return citation.model_copy(update={"problem": str(exc)})
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if citation.start is not None:
        end = citation.end or citation.start
        if not 1 <= citation.start <= end <= len(lines):
            return citation.model_copy(update={
                "problem": f"lines {citation.start}-{end} are outside {citation.path}, "
                f"which has {len(lines)} lines",
            })
        chosen = lines[citation.start - 1 : end]
    elif citation.section:
        try:
            found = find_section(text, citation.section)
        except LookupError as exc:
            return citation.model_copy(update={"problem": str(exc)})
        chosen = lines[found.start - 1 : found.end]
    else:
        chosen = lines
    content = "\n".join(chosen)
    if len(content) > _MAX_SHOWN:
        content = content[:_MAX_SHOWN] + "\n[... cut]"
    return citation.model_copy(update={"resolved": True, "content": content})


def resolve_citations(store: Store, text: str) -> list[Citation]:
    """Find every citation in ``text`` and check it against ``store``."""
    return [_resolve(store, c) for c in find_citations(text)]


def render_cited(citations: list[Citation]) -> str:
    """The cited content as a judge sees it: each citation, then its text or NOT FOUND."""
    if not citations:
        return "(the answer cites nothing)"
    blocks = []
    for c in citations:
        body = c.content if c.resolved else f"NOT FOUND ({c.problem})"
        blocks.append(f"{c.raw}\n{body}")
    return "\n\n".join(blocks)
