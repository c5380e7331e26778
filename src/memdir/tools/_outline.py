"""``toc`` and ``section_read``: a file's heading outline, and one section by heading path."""

from __future__ import annotations

from memdir.store import Store, find_section, load_document
from memdir.tools._spec import ToolError, ToolFunction, tool_flags
from memdir.tools._view import number_capped, split_lines

__all__ = ["MAX_TOC_HEADINGS", "section_read_tool", "toc_tool"]

MAX_TOC_HEADINGS = 2_000
"""Headings a toc lists; past that it says how many more there are and where they start."""


def toc_tool(store: Store) -> ToolFunction:
    """The ``toc`` tool over ``store``."""

    @tool_flags(read_only=True)
    async def toc(path: str) -> str:
        """Show the heading outline of a memory file, with the lines each section spans.

        Use it on a long file to see its structure before reading: each heading is
        shown with its level (# to ######) and its line range, which you can pass
        to view as view_range or name in section_read.

        Args:
            path: The file to outline, e.g. /memories/people/alice.md.
        """
        doc = load_document(store, path)
        count = len(split_lines(doc.text))
        head = f"{doc.path}: {count} lines"
        if doc.description:
            head += f" - {doc.description}"
        if not doc.sections:
            return f"{head}\nThe file has no headings; read it with view."
        lines = [head]
        for section in doc.sections[:MAX_TOC_HEADINGS]:
            indent = "  " * (section.heading.level - 1)
            marks = "#" * section.heading.level
            lines.append(
                f"{indent}{marks} {section.heading.text} (lines {section.start}-{section.end})"
            )
        more = len(doc.sections) - MAX_TOC_HEADINGS
        if more > 0:
            start = doc.sections[MAX_TOC_HEADINGS].start
            lines.append(
                f"[... {more:,} more headings from line {start} on; toc lists the first "
                f"{MAX_TOC_HEADINGS:,}. Read on with view(path={doc.path!r}, "
                f"view_range=[{start}, {min(count, start + 199)}]) or section_read.]"
            )
        return "\n".join(lines)

    return toc


def section_read_tool(store: Store) -> ToolFunction:
    """The ``section_read`` tool over ``store``."""

    @tool_flags(read_only=True)
    async def section_read(path: str, heading_path: list[str]) -> str:
        """Read one section of a memory file, found by its headings.

        The section runs from its heading to the next heading of the same or a
        higher level, subsections included; lines are numbered as in view. Give the
        heading texts from outer to inner; '#' marks and letter case are ignored,
        and a single heading is enough when it is unique in the file. If the path
        is ambiguous or matches nothing, the error lists the file's headings.

        Args:
            path: The file to read, e.g. /memories/people/alice.md.
            heading_path: Heading texts from outer to inner, e.g. ["Work", "2023"].
        """
        doc = load_document(store, path)
        try:
            section = find_section(doc.body, heading_path, doc.body_line)
        except LookupError as exc:
            raise ToolError(f"{doc.path}: {exc}") from None
        lines = split_lines(doc.text)[section.start - 1 : section.end]
        title = " > ".join(section.path)
        return f"{doc.path} > {title} (lines {section.start}-{section.end}):\n" + number_capped(
            doc.path, lines, section.start
        )

    return section_read
