"""Growth curves as inline SVG: one small chart per metric, the current step marked.

Drawn on the server as plain SVG (no script, no plotting library), and every
point is a link to its step, so the curves double as a way to move through time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from memdir.metrics import SHAPE_COLUMNS

__all__ = ["GROWTH", "Chart", "growth_chart"]

GROWTH: tuple[tuple[str, str], ...] = (
    *((c.column, c.title) for c in SHAPE_COLUMNS if c.chart),
    ("b1", "B1 distinguishability"),
    ("b2", "B2 cohesion"),
    ("b3", "B3 leakage"),
    ("b4", "B4 Spearman"),
)
"""The growth table's columns the history page draws, with their titles."""

_W, _H, _PAD = 260, 90, 6


@dataclass(frozen=True, slots=True)
class Chart:
    """One drawn metric: its title, the current value, and the SVG."""

    title: str
    current: str
    svg: Markup


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3f}"


def growth_chart(title: str, values: Sequence[float | None], current: int,
                 step_url: Callable[[int], str]) -> Chart:
    """Draw one metric over the steps, with a marker on step ``current``.

    Args:
        title: The chart's title.
        values: One value per step (None where undefined).
        current: The step to mark.
        step_url: The URL of a step, for the point links.
    """
    present = [v for v in values if v is not None]
    low, high = (min(present), max(present)) if present else (0.0, 1.0)
    if high == low:
        high = low + 1.0
    count = max(len(values) - 1, 1)

    def x(i: int) -> float:
        return _PAD + (_W - 2 * _PAD) * i / count

    def y(v: float) -> float:
        return _H - _PAD - (_H - 2 * _PAD) * (v - low) / (high - low)

    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values) if v is not None)
    parts = [
        f'<svg class="chart" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<line class="now" x1="{x(current):.1f}" y1="0" x2="{x(current):.1f}" y2="{_H}"/>',
        f'<polyline points="{points}"/>',
    ]
    for i, v in enumerate(values):
        if v is None:
            continue
        mark = ' class="here"' if i == current else ""
        parts.append(f'<a href="{escape(step_url(i))}"><circle{mark} cx="{x(i):.1f}" '
                     f'cy="{y(v):.1f}" r="{4 if i == current else 2.2}"><title>step {i}: '
                     f"{_fmt(v)}</title></circle></a>")
    parts.append(f'<text x="{_PAD}" y="{_H - 1}">{_fmt(low if present else None)}</text>')
    parts.append(f'<text x="{_PAD}" y="11">{_fmt(high if present else None)}</text>')
    parts.append("</svg>")
    now = values[current] if 0 <= current < len(values) else None
    return Chart(title, _fmt(now), Markup("".join(parts)))
