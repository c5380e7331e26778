"""One table renderer for every report: markdown for reading, CSV for analysis.

The study report, the skills report and the store growth tables all build a
:class:`Table` (columns and rows of plain values) and render it here, so a
missing value is spelled one way everywhere (:data:`MISSING` in markdown, an
empty field in CSV) and floats are rounded only in markdown. The module uses
the standard library alone, so every layer (metrics included) may import it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["MISSING", "Table", "Value", "fmt", "markdown_grid"]

Value = str | int | float | None
"""What a table cell holds; None is a missing value."""

MISSING = "—"
"""How markdown shows a missing value (CSV leaves the field empty)."""


def fmt(value: Value, digits: int = 1) -> str:
    """A table cell as markdown text: floats rounded, None as :data:`MISSING`.

    Pipes and line breaks inside text are escaped so a cell never splits the row.
    """
    if value is None:
        return MISSING
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_grid(columns: Sequence[str], rows: Sequence[Sequence[Value]],
                  digits: int = 1) -> list[str]:
    """The header, rule and row lines of a GitHub markdown table."""
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join(" --- " for _ in columns) + "|"]
    lines.extend("| " + " | ".join(fmt(v, digits) for v in row) + " |" for row in rows)
    return lines


@dataclass
class Table:
    """One report table: a name (its CSV file's stem), a title, columns, rows and notes."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Value]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    digits: int = 1
    empty: str = "(no complete cells)"

    def grid(self) -> str:
        """The table alone as GitHub markdown (no title, no notes)."""
        return "\n".join(markdown_grid(self.columns, self.rows, self.digits))

    def markdown(self) -> str:
        """The table as GitHub markdown under a ``###`` title, notes after it."""
        lines = [f"### {self.title}", ""]
        lines.append(self.grid() if self.rows else self.empty)
        lines.extend(["", *(f"- {n}" for n in self.notes)])
        return "\n".join(lines).rstrip() + "\n"

    def csv(self) -> str:
        """The table as CSV: full precision, an empty field for a missing value."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow(["" if v is None else v for v in row])
        return buffer.getvalue()
