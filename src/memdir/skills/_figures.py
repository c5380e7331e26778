"""Figures of a skill-setting run, drawn from its step records (matplotlib, imported lazily).

- ``curation_effort.png``: the curator's rounds and tool calls per episode along
  each full chain, one line per curated cell (the paper's Figure 11: whether the
  curation effort per episode falls as the library grows).
- ``running_success.png``: per goal family, each memory variant's running success
  rate over the family's attempts in the full chain minus that of the no-store
  cell with the same execution agent (the paper's Figure 12).
- ``hierarchy.png`` and ``compression.png``: the paper's Figures 9 and 10
  (:mod:`memdir.skills._growth_figures`).

A figure is drawn only where its records exist (curated full-chain cells; a
``none`` full-chain cell to difference against); :func:`write_figures` returns
the files it wrote and, for each figure it skipped, why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.skills._families import FAMILIES
from memdir.skills._growth_figures import draw_compression, draw_hierarchy
from memdir.skills._report import CellReport
from memdir.skills._run import StepRecord

__all__ = ["Figures", "running_success", "write_figures"]

FULL = "full"
"""The full chain's folder name: the figures follow the one 140-task chain."""


@dataclass
class Figures:
    """What :func:`write_figures` wrote, and the figures it could not draw (with why)."""

    written: list[Path]
    skipped: dict[str, str]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _integer_axes(ax: Any, last: int, y: bool = True) -> None:
    """Whole-number ticks on x (1 to ``last``, never a fraction) and, if ``y``, on y."""
    from matplotlib.ticker import MaxNLocator

    ax.set_xlim(0.5, max(last, 2) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if y:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _save(fig: Any, legend_from: Any, title: str, legend_height: float, path: Path) -> Path:
    """Put one legend under the panels (from ``legend_from``'s lines), a title, and save."""
    handles, labels = legend_from.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, legend_height, 1, 1))
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def _full_chains(cells: Sequence[CellReport]) -> list[tuple[CellReport, list[StepRecord]]]:
    return [(c, c.chains[FULL]) for c in cells
            if c.cell.protocol == "full-chain" and c.chains.get(FULL)]


def _label(report: CellReport) -> str:
    cell = report.cell
    parts: list[str] = [cell.variant]
    if cell.curator is not None:
        parts.append(f"cur {cell.curator.rsplit('/', 1)[-1]}")
    parts.append(f"exec {cell.execution.rsplit('/', 1)[-1]}")
    return ", ".join(parts)


def _curation_effort(cells: Sequence[CellReport], path: Path) -> Path | str:
    curated = [(c, steps) for c, steps in _full_chains(cells)
               if any(s.curation is not None for s in steps)]
    if not curated:
        return "no full-chain cell with curation records"
    plt = _pyplot()
    fig, (rounds, calls) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    last = max(s.position + 1 for _, steps in curated for s in steps)
    for report, steps in curated:
        xs = [s.position + 1 for s in steps]
        label = _label(report)
        rounds.plot(xs, [s.rounds("curation") for s in steps], marker=".", label=label)
        calls.plot(xs, [s.curation.tool_call_count if s.curation else 0 for s in steps],
                   marker=".", label=label)
    rounds.set_ylabel("curator rounds")
    calls.set_ylabel("curator tool calls")
    calls.set_xlabel("task position in the full chain")
    for ax in (rounds, calls):
        _integer_axes(ax, last)
        ax.set_ylim(0, max(2, ax.get_ylim()[1]) * 1.1)
        ax.grid(alpha=0.3)
    return _save(fig, rounds, "Curation effort per episode (full chain)", 0.06, path)


def running_success(steps: Sequence[StepRecord], family: str) -> list[float]:
    """The running success rate over a family's attempts, in chain order (k-th: wins / k)."""
    rates: list[float] = []
    won = 0
    for step in (s for s in steps if s.family == family):
        won += step.success
        rates.append(won / (len(rates) + 1))
    return rates


def _differenced(steps: Sequence[StepRecord], floor: Sequence[StepRecord],
                 family: str) -> list[float]:
    ours, theirs = running_success(steps, family), running_success(floor, family)
    return [round(100 * (a - b), 6) for a, b in zip(ours, theirs, strict=False)]


def _running_success(cells: Sequence[CellReport], path: Path) -> Path | str:
    chains = _full_chains(cells)
    floors = {c.cell.execution: steps for c, steps in chains if c.cell.variant == "none"}
    memory = [(c, steps) for c, steps in chains
              if c.cell.variant != "none" and c.cell.execution in floors]
    if not memory:
        return "needs a full-chain memory cell and the none cell with the same execution agent"
    families = [f for f in FAMILIES if any(s.family == f for _, steps in memory for s in steps)]
    plt = _pyplot()
    columns = 3 if len(families) > 2 else len(families)
    rows = -(-len(families) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows),
                             squeeze=False, sharey=True)
    curves = {(id(report), family): _differenced(steps, floors[report.cell.execution], family)
              for report, steps in memory for family in families}
    widest = max((abs(v) for curve in curves.values() for v in curve), default=0.0)
    bound = max(10.0, 10.0 * -(-widest // 10))  # whole tens, never under +-10 points
    for ax, family in zip(axes.flat, families, strict=False):
        for report, _ in memory:
            curve = curves[(id(report), family)]
            ax.plot(range(1, len(curve) + 1), curve, marker=".", label=_label(report))
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_title(family, fontsize=10)
        ax.set_xlabel(f"{family} attempts so far")
        _integer_axes(ax, max((len(c) for (_, f), c in curves.items() if f == family),
                              default=1), y=False)
        ax.set_ylim(-bound * 1.05, bound * 1.05)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(families):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("running success - no store (points)")
    return _save(fig, axes.flat[0],
                 "Running success by family, differenced against no store (full chain)", 0.08,
                 path)


def write_figures(cells: Sequence[CellReport], out_dir: Path,
                  run_dir: Path | None = None) -> Figures:
    """Draw every figure the records allow into ``out_dir``.

    Args:
        cells: The run's cells.
        out_dir: Where the PNG files go.
        run_dir: The run folder, whose chain stores Figure 9 measures (default:
            ``out_dir``, where the report writes them).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    stores = run_dir or out_dir
    found = Figures([], {})
    chains = _full_chains(cells)
    draws: tuple[tuple[str, Callable[[Path], Path | str]], ...] = (
        ("curation_effort.png", lambda path: _curation_effort(cells, path)),
        ("running_success.png", lambda path: _running_success(cells, path)),
        ("hierarchy.png", lambda path: draw_hierarchy(chains, _label, _pyplot(), stores, path)),
        ("compression.png", lambda path: draw_compression(chains, _label, _pyplot(), path)))
    for name, draw in draws:
        result = draw(out_dir / name)
        if isinstance(result, Path):
            found.written.append(result)
        else:
            found.skipped[name] = result
    return found
