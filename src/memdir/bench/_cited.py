"""What the attribution judge is shown of each citation: its file, numbered, cited lines marked.

A citation points at lines of a file: a line range, a section (the lines its
heading spans), or the whole file. The judge sees the whole file when its
numbered text fits the budget (:data:`CITED_CHARS` characters per citation).
A longer file is shown as a window that holds every cited line and as much
context before and after them as the budget allows, with a line saying which
lines of how many are shown. Only where the cited lines alone exceed the budget
(a whole-file citation of a long file, a very long section) is the cited text
itself cut, after its first lines, and the mark says so. So a citation of line
606 of a long file always shows line 606: the window is placed by the citation,
never cut from the top of the file.

Cost: one read of each cited file, and linear in its lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.agents import Citation
from memdir.store import Store, StoreError, find_section

__all__ = ["CITED_CHARS", "CITED_VIEW", "Window", "cited_window", "judged_view"]

CITED_CHARS = 12_000
"""Most characters of one citation's numbered file text the attribution judge is shown."""
CITED_VIEW = "window"
"""How cited files are shown, as a judge pin names it: a window placed around the cited
lines (the whole file when it fits). Pins written before it had a cut from the top."""


@dataclass(frozen=True)
class Window:
    """The lines of a file shown for one citation."""

    first: int
    """First line shown (1-based)."""
    last: int
    """Last line shown."""
    total: int
    """Lines in the file."""
    cited: tuple[int, int]
    """The cited lines (first, last); the whole file for a whole-file citation."""
    text: str
    """The shown lines, numbered, cited ones marked ``>>``."""

    @property
    def whole(self) -> bool:
        """Whether every line of the file is shown."""
        return self.first == 1 and self.last == self.total


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _numbered(lines: list[str], cited: tuple[int, int], marked: bool) -> list[str]:
    return [f"{'>>' if marked and cited[0] <= i <= cited[1] else '  '} {i:>5}  {line}"
            for i, line in enumerate(lines, start=1)]


def _range(citation: Citation, text: str, total: int) -> tuple[int, int]:
    if citation.section:
        found = find_section(text, citation.section)
        return found.start, min(found.end, total)
    if citation.start is None:
        return 1, total
    end = citation.end or citation.start
    return min(citation.start, total), min(max(end, citation.start), total)


def cited_window(store: Store, citation: Citation, cap: int = CITED_CHARS) -> Window:
    """The window of ``citation``'s file the judge is shown, at most about ``cap`` characters.

    Raises:
        StoreError: The file cannot be read.
        LookupError: A cited section no longer exists.
    """
    text = store.read(citation.path)
    lines = _lines(text)
    total = len(lines)
    if total == 0:
        return Window(1, 0, 0, (1, 0), "(the file is empty)")
    cited = _range(citation, text, total)
    marked = cited != (1, total)
    rows = _numbered(lines, cited, marked)
    sizes = [len(r) + 1 for r in rows]
    if sum(sizes) <= cap:
        return Window(1, total, total, cited, "\n".join(rows))
    first, last = cited
    used = sum(sizes[first - 1:last])
    if used > cap:  # the cited lines alone exceed the budget: keep their first lines
        last, used = first, sizes[first - 1]
        while last < cited[1] and used + sizes[last] <= cap:
            used += sizes[last]
            last += 1
        return Window(first, last, total, cited, "\n".join(rows[first - 1:last]))
    # Grow the window around the cited lines, one line above then one below, while it fits.
    grew = True
    while grew:
        grew = False
        if first > 1 and used + sizes[first - 2] <= cap:
            first, used, grew = first - 1, used + sizes[first - 2], True
        if last < total and used + sizes[last] <= cap:
            last, used, grew = last + 1, used + sizes[last], True
    return Window(first, last, total, cited, "\n".join(rows[first - 1:last]))


def _describe(citation: Citation, window: Window) -> str:
    kind = ("the cited section's lines" if citation.section else
            "the cited lines" if citation.start is not None else "")
    if window.whole:
        return f"the whole file, {kind} marked >>" if kind else "the whole file"
    shown = f"lines {window.first}-{window.last} of {window.total}"
    if window.last < window.cited[1] and not kind:
        return (f"{shown}: the file is cited whole and is too long to show; lines "
                f"{window.last + 1}-{window.total} are not shown")
    if window.last < window.cited[1]:
        return (f"{shown}: the cited lines run {window.cited[0]}-{window.cited[1]}, too long to "
                f"show whole; lines {window.last + 1}-{window.cited[1]} are not shown")
    around = f"{kind} marked >> with the lines around them" if kind else ""
    return f"{shown}, {around}; the rest of the file is not shown"


def judged_view(store: Store, citations: list[Citation], cap: int = CITED_CHARS) -> str:
    """What the attribution judge is shown: each citation, then the window of its file.

    Each resolved citation is followed by its file's lines, numbered, with the
    cited lines marked ``>>`` (see :func:`cited_window`) and a heading saying
    which lines are shown. An unresolved citation shows NOT FOUND and why.
    """
    if not citations:
        return "(the answer cites nothing)"
    blocks = []
    for c in citations:
        if not c.resolved:
            blocks.append(f"{c.raw}\nNOT FOUND ({c.problem})")
            continue
        try:
            window = cited_window(store, c, cap)
        except (StoreError, LookupError) as exc:  # changed since it was resolved
            blocks.append(f"{c.raw}\nNOT FOUND ({exc})")
            continue
        blocks.append(f"{c.raw} ({_describe(c, window)})\n{window.text}")
    return "\n\n".join(blocks)
