"""The report figures' layout: nothing drawn on top of another thing, nothing cut off."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from memdir.study._figures import _Bar, _hbars, label_points, scatter_limits  # noqa: E402


def _cap_boxes(ax: object, line: object, renderer: object) -> list[object]:
    """The display box of each cap marker of an error bar line."""
    from matplotlib.transforms import Bbox

    half = line.get_markersize() * line.figure.dpi / 72 / 2  # type: ignore[attr-defined]
    points = ax.transData.transform(line.get_xydata())  # type: ignore[attr-defined]
    return [Bbox([[x - 1, y - half], [x + 1, y + half]]) for x, y in points]


@pytest.mark.parametrize("limit", [None, 100.0])
def test_bar_values_never_sit_on_an_error_bar(limit: float | None) -> None:
    scale = 1.0 if limit is None else 10.0
    bars = [_Bar("closed-book", 0.0, 0.0, 0.0), _Bar("chunk", 1.0 * scale, 1.0 * scale,
                                                     1.0 * scale),
            _Bar("verbatim", 8.7 * scale, 8.5 * scale, 8.9 * scale),
            _Bar("wide", 4.0 * scale, 2.0 * scale, 6.0 * scale)]
    fig, ax = plt.subplots(figsize=(6, 2.5))
    _hbars(ax, bars, "x", limit=limit, integer=True)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    whiskers = [seg for coll in ax.collections for seg in coll.get_segments()]
    assert len(whiskers) == len(bars)
    caps = [box for line in ax.lines for box in _cap_boxes(ax, line, renderer)]
    frame = ax.get_window_extent(renderer)
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, text.get_text()  # inside the axes
        for seg in whiskers:
            (x0, y0), (x1, y1) = ax.transData.transform(seg)
            crosses_x = min(x0, x1) - 2 <= box.x1 and box.x0 <= max(x0, x1) + 2
            crosses_y = box.y0 <= y0 <= box.y1
            assert not (crosses_x and crosses_y), f"{text.get_text()!r} sits on a whisker"
        for cap in caps:
            assert not box.overlaps(cap), f"{text.get_text()!r} sits on a whisker's cap"
    plt.close(fig)


def test_cost_against_correctness_draws_a_cell_at_the_origin_whole() -> None:
    (x0, x1), (y0, y1) = scatter_limits(10.0)
    for x, y in [(0.0, 0.0), (0.0, 100.0), (8.7, 10.3)]:
        assert x0 < x < x1 and y0 < y < y1
    assert x1 == 10.0 and y1 - 100 == pytest.approx(0 - y0)


def test_cost_against_correctness_labels_cover_no_other_point() -> None:
    # REALTALK's offline smoke cells: closed-book's label ran over chunk's point
    points = {(0.0, 2.09): "closed-book", (1.0, 4.63): "chunk", (9.39, 8.02): "verbatim",
              (1.05, 3.9): "near chunk"}
    fig, ax = plt.subplots(figsize=(7.5, 5))
    ax.scatter([x for x, _ in points], [y for _, y in points], zorder=3)
    top = 1.15 * 9.39
    (x0, x1), (y0, y1) = scatter_limits(top)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    label_points(ax, points, right_from=0.6 * top)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    marks = [ax.transData.transform(xy) for xy in points]
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert sorted(t.get_text() for t in ax.texts) == sorted(points.values())
    for i, box in enumerate(boxes):
        for mx, my in marks:
            assert not (box.x0 - 3 <= mx <= box.x1 + 3 and box.y0 - 3 <= my <= box.y1 + 3), \
                f"{ax.texts[i].get_text()!r} covers a point"
        for other in boxes[i + 1:]:
            assert not box.overlaps(other)
    plt.close(fig)
