"""The skill setting's growth figures: hierarchy and adherence (Figure 9), compression (Figure 10).

Both follow the full chain, one line per cell, the x axis the task position:

- ``hierarchy.png`` (the paper's Figure 9): measured on the chain store's own
  per-task snapshots (its git history, one commit per task), the left panel is
  the hierarchy at the content level, the mean leaf depth of the combined tree
  with every heading level counted, and the right panel the taxonomy adherence
  along the chain, B1 sibling label distinguishability (a falling line is the
  erosion the paper reads there).
- ``compression.png`` (its Figure 10): the store's size in KB after each task
  (from the step records), and each cell's size as a share of the episode log's
  at the same position, the episode log being every trajectory kept verbatim (a
  share under 1 is compression), where a full-chain episode-log cell
  (``episode_log``, else ``episode_log_recent``: both store every trajectory) with
  the same execution agent exists.

The paper text we hold names what each figure tracks, not its panels' measures;
the panels above are our reading of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.metrics import measure_history
from memdir.store import Store, StoreError
from memdir.store.history import History

if TYPE_CHECKING:
    from memdir.skills._report import CellReport
    from memdir.skills._run import StepRecord

__all__ = ["draw_compression", "draw_hierarchy"]

_KB = 1024
_LOGS = ("episode_log", "episode_log_recent")
"""The variants whose store keeps every trajectory verbatim (they differ only in what is
served), the first preferred as the reference."""


def _lines(ax: Any, series: list[tuple[str, list[float], list[float]]], ylabel: str) -> None:
    for label, xs, ys in series:
        ax.plot(xs, ys, marker="." if len(xs) < 60 else None, linewidth=1.3, label=label)
    ax.set_xlabel("task position in the full chain", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)


def _finish(plt: Any, fig: Any, legend_from: Any, title: str, path: Path) -> Path:
    """One legend under the panels (``legend_from``'s lines), the title, saved and closed."""
    handles, labels = legend_from.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _trajectory(report: CellReport, run_dir: Path) -> tuple[list[float], list[float],
                                                             list[float]] | None:
    folder = run_dir / report.cell.key / "full" / "store"
    if not folder.is_dir():
        return None
    try:
        traj = measure_history(History(Store(folder)))
    except StoreError:  # a store kept without its history: nothing to measure
        return None
    steps = traj.column("step")
    depth, b1 = traj.column("mean_depth"), traj.column("b1")
    rows = [(float(s), d, b) for s, d, b in zip(steps, depth, b1, strict=True)
            if s is not None and float(s) > 0]  # step 0 is the empty store
    if not rows:
        return None
    return ([r[0] for r in rows], [r[1] or 0.0 for r in rows],
            [r[2] if r[2] is not None else float("nan") for r in rows])


def draw_hierarchy(chains: Sequence[tuple[CellReport, list[StepRecord]]], label: Any,
                   plt: Any, run_dir: Path, path: Path) -> Path | str:
    """Figure 9: mean leaf depth and B1 per task, measured on each chain's snapshots."""
    curves = []
    for report, _ in chains:
        if report.cell.variant in ("none",):
            continue
        found = _trajectory(report, run_dir)
        if found is not None:
            curves.append((label(report), *found))
    if not curves:
        return "no full-chain cell with a store history to measure"
    fig, (depth, adherence) = plt.subplots(1, 2, figsize=(10, 4))
    _lines(depth, [(n, xs, ds) for n, xs, ds, _ in curves], "mean leaf depth (headings count)")
    depth.set_title("Hierarchy at the content level", fontsize=10)
    _lines(adherence, [(n, xs, bs) for n, xs, _, bs in curves],
           "B1 sibling label distinguishability")
    adherence.set_ylim(0, 1.05)
    adherence.set_title("Taxonomy adherence", fontsize=10)
    return _finish(plt, fig, depth, "Store hierarchy and adherence along the full chain", path)


def draw_compression(chains: Sequence[tuple[CellReport, list[StepRecord]]], label: Any,
                     plt: Any, path: Path) -> Path | str:
    """Figure 10: store KB per task, and its share of the episode log's at the same task."""
    stored = [(r, steps) for r, steps in chains if any(s.store_bytes for s in steps)]
    if not stored:
        return "no full-chain cell with a store"
    logs: dict[str, list[StepRecord]] = {}
    for variant in reversed(_LOGS):  # the preferred log last, so it wins
        logs.update({r.cell.execution: steps for r, steps in stored if r.cell.variant == variant})
    fig, (size, share) = plt.subplots(1, 2, figsize=(10, 4))
    _lines(size, [(label(r), [s.position + 1.0 for s in steps],
                   [s.store_bytes / _KB for s in steps]) for r, steps in stored], "store KB")
    size.set_title("Store size after each task", fontsize=10)
    ratios = []
    for report, steps in stored:
        log = logs.get(report.cell.execution)
        if report.cell.variant in _LOGS or log is None:
            continue
        by_position = {s.position: s.store_bytes for s in log}
        points = [(s.position + 1.0, s.store_bytes / by_position[s.position]) for s in steps
                  if by_position.get(s.position)]
        ratios.append((label(report), [p[0] for p in points], [p[1] for p in points]))
    if ratios:
        _lines(share, ratios, "store bytes / episode log's bytes")
        share.axhline(1.0, color="grey", linewidth=0.8)
        share.set_title("Compression against the episode log", fontsize=10)
    else:
        share.set_axis_off()
        share.text(0.5, 0.5, "no full-chain episode-log cell with the same\nexecution agent "
                   "to compare with", ha="center", va="center", fontsize=9)
    return _finish(plt, fig, size, "Store compression along the full chain", path)
