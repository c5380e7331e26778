"""Growth curves as inline SVG: one small chart per metric, the current step marked.

Drawn on the server as plain SVG (no script, no plotting library), and every
point is a link to its step, so the curves double as a way to move through time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from memdir.metrics import SHAPE_COLUMNS

__all__ = ["GROWTH", "Chart", "growth_chart", "value_range"]

GROWTH: tuple[tuple[str, str], ...] = (
    *((c.column, c.title) for c in SHAPE_COLUMNS if c.chart),
    ("b1", "B1 distinguishability"),
    ("b2", "B2 cohesion"),
    ("b3", "B3 leakage"),
    ("b4", "B4 Spearman"),
)
"""The growth table's columns the history page draws, with their titles."""

_W, _H, _PAD = 260, 100, 6
_LEFT, _BOTTOM = 40, 16
"""Room for the value labels on the left and the step axis below the plot."""
_MIN_SPAN = 0.2
"""The value axis spans at least this share of the largest value's size, so that a
change of a few percent looks like one and not like a cliff."""


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


def _axis_label(value: float) -> str:
    """A value short enough for the chart's left margin: ``104,937`` reads ``105k``."""
    size = abs(value)
    if size >= 10_000_000:
        return f"{value / 1_000_000:.0f}M"
    if size >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if size >= 10_000:
        return f"{value / 1_000:.0f}k"
    return _fmt(value)


def value_range(values: Sequence[float | None]) -> tuple[float, float]:
    """The value axis of a chart: from 0 for counts, else around the data, never too tight.

    A metric whose values are all whole and not negative (files, bytes, folders)
    is drawn from 0; any other keeps its own range, widened to at least
    :data:`_MIN_SPAN` of its largest magnitude around the middle.
    """
    present = [float(v) for v in values if v is not None]
    if not present:
        return 0.0, 1.0
    low, high = min(present), max(present)
    if low >= 0 and all(v.is_integer() for v in present):
        return 0.0, max(high, 1.0)
    span = max(high - low, _MIN_SPAN * max(abs(low), abs(high)), 1e-9)
    middle = (low + high) / 2
    return middle - span / 2, middle + span / 2


def growth_chart(title: str, values: Sequence[float | None], current: int,
                 step_url: Callable[[int], str]) -> Chart:
    """Draw one metric over the steps, with a marker on step ``current``.

    The value axis is labelled on the left (its bottom and top), the step axis
    below (the first and last step).

    Args:
        title: The chart's title.
        values: One value per step (None where undefined).
        current: The step to mark.
        step_url: The URL of a step, for the point links.
    """
    present = [v for v in values if v is not None]
    low, high = value_range(values)
    count = max(len(values) - 1, 1)
    bottom = _H - _BOTTOM

    def x(i: int) -> float:
        return _LEFT + (_W - _LEFT - _PAD) * i / count

    def y(v: float) -> float:
        return bottom - (bottom - _PAD) * (v - low) / (high - low)

    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values) if v is not None)
    last = len(values) - 1
    parts = [
        f'<svg class="chart" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<line class="axis" x1="{_LEFT}" y1="{bottom}" x2="{_W - _PAD}" y2="{bottom}"/>',
        f'<line class="axis" x1="{_LEFT}" y1="{_PAD}" x2="{_LEFT}" y2="{bottom}"/>',
        f'<line class="now" x1="{x(current):.1f}" y1="{_PAD}" x2="{x(current):.1f}" '
        f'y2="{bottom}"/>',
        f'<polyline points="{points}"/>',
    ]
    for i, v in enumerate(values):
        if v is None:
            continue
        mark = ' class="here"' if i == current else ""
        parts.append(f'<a href="{escape(step_url(i))}"><circle{mark} cx="{x(i):.1f}" '
                     f'cy="{y(v):.1f}" r="{4 if i == current else 2.2}"><title>step {i}: '
                     f"{_fmt(v)}</title></circle></a>")
    if present:
        parts.append(f'<text class="value" x="{_LEFT - 3}" y="{bottom}" text-anchor="end">'
                     f"{_axis_label(low)}</text>")
        parts.append(f'<text class="value" x="{_LEFT - 3}" y="{_PAD + 7}" text-anchor="end">'
                     f"{_axis_label(high)}</text>")
    parts.append(f'<text class="step" x="{_LEFT}" y="{_H - 3}">step 0</text>')
    if last > 0:
        parts.append(f'<text class="step" x="{_W - _PAD}" y="{_H - 3}" text-anchor="end">'
                     f"{last}</text>")
    parts.append("</svg>")
    now = values[current] if 0 <= current < len(values) else None
    return Chart(title, _fmt(now), Markup("".join(parts)))
