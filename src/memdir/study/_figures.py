"""The report's figures: correctness and search cost per cell, and cost against correctness.

One set of three PNGs per benchmark (its scores do not compare across
benchmarks): correctness per cell with 95% percentile bootstrap intervals over
its questions; search cost per cell (tool calls per query with their interval,
and cents per query where prices are known, else tokens per query, else rounds
per query for a run that spent nothing); and cost
against correctness, one labelled point per cell. Then the paper's Figure 5, the
model-built stores checkpointed per build unit (:mod:`memdir.study._growth_figure`),
where the run has one. Value axes start at zero
(correctness runs 0-100) so a small difference stays small on the page; axes
that count get integer ticks. matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from memdir.metrics._plots import _pyplot
from memdir.study._growth_figure import store_growth
from memdir.study._load import RunRecords
from memdir.study._records import CellStatus, QuestionRecord
from memdir.study._scores import primary_score, score_name
from memdir.study._stats import bootstrap_interval

__all__ = ["Figure", "write_figures"]

_DIMENSIONS = (("conversation", "conversation"), ("variant", "variant"),
               ("builder_model", "built by"), ("search_model", "read by"),
               ("harness", "harness"))


@dataclass(frozen=True)
class Figure:
    """A written figure: what it shows (its paper counterpart) and where it is."""

    title: str
    path: Path


@dataclass(frozen=True)
class _Bar:
    label: str
    value: float
    low: float
    high: float


def _labels(cells: Sequence[CellStatus]) -> list[str]:
    """Each cell named by the dimensions that vary among ``cells`` (the variant always)."""
    varying = [(field, prefix) for field, prefix in _DIMENSIONS
               if field == "variant"
               or len({getattr(s.cell, field) for s in cells}) > 1]
    labels = []
    for s in cells:
        parts = []
        for field, prefix in varying:
            value = getattr(s.cell, field)
            if value is not None:
                short = value.rsplit("/", 1)[-1] if field.endswith("_model") else value
                parts.append(short if field == "variant" else f"{prefix} {short}")
        labels.append(", ".join(parts))
    return labels


def _bar(label: str, values: list[float], seed: int, scale: float = 1.0) -> _Bar:
    low, high = bootstrap_interval(values, seed=seed)
    return _Bar(label, scale * mean(values), scale * low, scale * high)


def _hbars(ax: Any, bars: list[_Bar], xlabel: str, *, limit: float | None,
           integer: bool) -> None:
    from matplotlib.ticker import MaxNLocator

    ys = list(range(len(bars)))
    ax.barh(ys, [b.value for b in bars], color="#4c72b0", height=0.6,
            xerr=[[b.value - b.low for b in bars], [b.high - b.value for b in bars]],
            error_kw={"ecolor": "#222222", "capsize": 3, "elinewidth": 1})
    ax.set_yticks(ys, [b.label for b in bars], fontsize=8)
    ax.invert_yaxis()
    top = limit if limit is not None else max([b.high for b in bars] + [1e-9]) * 1.08
    ax.set_xlim(0, top)
    if integer:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel, fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    for y, b in zip(ys, bars, strict=True):
        text = f"{b.value:.3g}"
        if b.value > 0.15 * top:  # inside the bar's end, above the interval's whisker
            ax.text(b.value - 0.01 * top, y - 0.15, text, va="center",
                    ha="right", fontsize=7, color="white")
        else:
            ax.text(b.high + 0.01 * top, y, text, va="center", fontsize=7)


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


@dataclass(frozen=True)
class _Benchmark:
    """One benchmark's complete cells with what the figures plot of each."""

    key: str
    cells: list[CellStatus]
    labels: list[str]
    score: Callable[[QuestionRecord], float | None]
    score_label: str
    cost: list[float | None]
    cost_label: str


def _cost_axis(run: RunRecords, cells: list[CellStatus]
               ) -> tuple[list[float | None], str]:
    """Cents per query where every cell is priced and some cell spent; else tokens, calls."""
    cents = []
    for s in cells:
        costs = [r.cost(run.prices) for r in run.records[s.cell.key]]
        cents.append(None if any(c is None for c in costs) else 100 * mean(c or 0.0 for c in costs))
    if all(c is not None for c in cents) and any(cents):
        return cents, "search cents per query"
    tokens = [mean(r.usage.input + r.usage.output for r in run.records[s.cell.key])
              for s in cells]
    if any(tokens):
        return list(tokens), "search tokens per query (input + output)"
    calls = [mean(r.tool_calls for r in run.records[s.cell.key]) for s in cells]
    return list(calls), "search tool calls per query (no tokens or cents recorded)"


def _benchmarks(run: RunRecords) -> list[_Benchmark]:
    grouped: dict[str, list[CellStatus]] = {}
    for s in run.complete:
        if run.records[s.cell.key]:
            grouped.setdefault(s.cell.dataset_key, []).append(s)
    found = []
    for key, cells in grouped.items():
        records = [r for s in cells for r in run.records[s.cell.key]]
        judged = all(r.grades.judge_correct is not None for r in records)

        def score(r: QuestionRecord, judged: bool = judged) -> float | None:
            return primary_score(r, judged)

        label = "judge: correct %" if judged else f"{score_name(records)} x 100"
        cost, cost_label = _cost_axis(run, cells)
        found.append(_Benchmark(key, cells, _labels(cells), score, label, cost, cost_label))
    return found


def _correctness(run: RunRecords, b: _Benchmark, seed: int, path: Path) -> Path:
    plt = _pyplot()
    bars = []
    for s, label in zip(b.cells, b.labels, strict=True):
        values = [v for r in run.records[s.cell.key] if (v := b.score(r)) is not None]
        if values:
            bars.append(_bar(label, values, seed, 100.0))
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.42 * max(len(bars), 1)))
    _hbars(ax, bars, f"{b.score_label} (95% bootstrap interval)", limit=100.0, integer=True)
    ax.set_title(f"Correctness per cell — {b.key}", fontsize=10)
    return _save(fig, path)


def _search_cost(run: RunRecords, b: _Benchmark, seed: int, path: Path) -> Path:
    plt = _pyplot()
    calls = [_bar(label, [float(r.tool_calls) for r in run.records[s.cell.key]], seed)
             for s, label in zip(b.cells, b.labels, strict=True)]
    if "tool calls" in b.cost_label:  # nothing spent: the second panel counts rounds
        spent = [_bar(label, [float(r.rounds) for r in run.records[s.cell.key]], seed)
                 for s, label in zip(b.cells, b.labels, strict=True)]
        spent_label = "rounds (model calls) per query (95% bootstrap interval)"
    else:
        spent = [_Bar(label, c, c, c) for label, c in zip(b.labels, b.cost, strict=True)
                 if c is not None]
        spent_label = b.cost_label
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.9 + 0.42 * len(calls)))
    _hbars(left, calls, "tool calls per query (95% bootstrap interval)", limit=None,
           integer=True)
    _hbars(right, spent, spent_label, limit=None, integer="cents" not in spent_label)
    right.set_yticks(range(len(spent)), [""] * len(spent))
    fig.suptitle(f"Search cost per cell — {b.key}", fontsize=10)
    return _save(fig, path)


def _cost_vs_correctness(run: RunRecords, b: _Benchmark, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5))
    xs, ys, names = [], [], []
    for s, label, cost in zip(b.cells, b.labels, b.cost, strict=True):
        values = [v for r in run.records[s.cell.key] if (v := b.score(r)) is not None]
        if cost is not None and values:
            xs.append(cost)
            ys.append(100 * mean(values))
            names.append(label)
    ax.scatter(xs, ys, color="#c44e52", zorder=3)
    top = 1.15 * max(xs) if xs and max(xs) > 0 else 1.0
    at: dict[tuple[float, float], list[str]] = {}
    for x, y, name in zip(xs, ys, names, strict=True):  # cells on one spot share a label
        at.setdefault((round(x, 9), round(y, 6)), []).append(name)
    for (x, y), group in at.items():
        right = x > 0.6 * top
        ax.annotate("\n".join(group), (x, y), textcoords="offset points",
                    xytext=(-6 if right else 6, 4), ha="right" if right else "left",
                    va="bottom", fontsize=7)
    ax.set_xlim(0, top)
    ax.set_ylim(0, 100)
    ax.set_xlabel(b.cost_label, fontsize=9)
    ax.set_ylabel(b.score_label, fontsize=9)
    ax.grid(alpha=0.3)
    ax.set_title(f"Search cost against correctness — {b.key} (one point per cell)", fontsize=10)
    return _save(fig, path)


def write_figures(run: RunRecords, out: Path) -> list[Figure]:
    """Draw every figure of the report into ``out``; return them in report order."""
    seed = run.manifest.seed if run.manifest is not None else 0
    figures = []
    for b in _benchmarks(run):
        stem = b.key.replace("+", "-")
        figures += [
            Figure(f"Correctness per cell, {b.key}",
                   _correctness(run, b, seed, out / f"fig-correctness-{stem}.png")),
            Figure(f"Search cost per cell, {b.key}",
                   _search_cost(run, b, seed, out / f"fig-search-cost-{stem}.png")),
            Figure(f"Search cost against correctness, {b.key}",
                   _cost_vs_correctness(run, b, out / f"fig-cost-vs-correctness-{stem}.png")),
        ]
    growth = store_growth(run, out / "fig5-store-growth.png")
    if growth is not None:
        figures.append(Figure("Figure 5 — model-built stores checkpointed per build unit",
                              growth))
    return figures
