"""A report table: a title, columns, rows and notes, rendered as markdown or CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

__all__ = ["Table", "fmt"]

Cell = str | int | float | None


def fmt(value: Cell, digits: int = 1) -> str:
    """A table cell as text: floats rounded, None as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


@dataclass
class Table:
    """One report table."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    digits: int = 1
    empty: str = "(no complete cells)"

    def markdown(self) -> str:
        """The table as GitHub markdown, title and notes included."""
        lines = [f"### {self.title}", ""]
        if not self.rows:
            lines.append(self.empty)
        else:
            lines.append("| " + " | ".join(self.columns) + " |")
            lines.append("|" + "|".join(" --- " for _ in self.columns) + "|")
            for row in self.rows:
                lines.append("| " + " | ".join(fmt(v, self.digits) for v in row) + " |")
        lines.extend(["", *(f"- {n}" for n in self.notes)])
        return "\n".join(lines).rstrip() + "\n"

    def csv(self) -> str:
        """The table as CSV (full precision; empty for None)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow(["" if v is None else v for v in row])
        return buffer.getvalue()
