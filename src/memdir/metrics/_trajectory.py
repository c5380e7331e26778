"""Metrics over every snapshot of a history: the store's growth table M_t.

Each distinct file version (git blob) is read and parsed once, and each distinct
text is tokenised once. Each step's tree is the last step's with the changed
files' parts made again (:class:`~memdir.metrics._tree.TreeBuilder`), so a step
costs Panel B's weighting of cached term counts (refitted on every state, as a
fresh measurement does) and little else in proportion to the store. A row keeps
its step's panels, not its tree (a tree lists every unit and file of its state).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scipy import sparse

from memdir.metrics._files import FileSummary
from memdir.metrics._measure import Measurer
from memdir.metrics._shape import SHAPE_COLUMNS, ShapeMetrics
from memdir.metrics._steps import TaxonomySteps
from memdir.metrics._taxonomy import TaxonomyMetrics
from memdir.metrics._text import TfidfCache
from memdir.progress import Progress
from memdir.progress import progress as reporter
from memdir.store.history import History, Step
from memdir.tables import Table

__all__ = ["COLUMNS", "StepMetrics", "Trajectory", "TrajectoryRow", "measure_history"]

COLUMNS = (
    "step", "message", *(c.column for c in SHAPE_COLUMNS), "b1", "b1_min", "b2", "b3", "b3_se",
    "b4",
)


@dataclass(slots=True)
class StepMetrics:
    """Both panels of one step (a :class:`~memdir.metrics.StoreMetrics` without its tree).

    A history's rows leave the trees out: each step's tree holds a list of every
    unit and file of its state, so a table keeping them would grow by the store's
    size at every step.
    """

    shape: ShapeMetrics
    taxonomy: TaxonomyMetrics

    def to_dict(self) -> dict[str, object]:
        """Both panels as a plain mapping."""
        return {"shape": self.shape.to_dict(), "taxonomy": self.taxonomy.to_dict()}


@dataclass(slots=True)
class TrajectoryRow:
    """The metrics of one step of a history."""

    step: Step
    metrics: StepMetrics

    def flat(self) -> dict[str, object]:
        """One row of the growth table (see :data:`COLUMNS`)."""
        shape, tax = self.metrics.shape, self.metrics.taxonomy
        return {
            "step": self.step.index,
            "message": self.step.message,
            **{c.column: c.value(shape) for c in SHAPE_COLUMNS},
            "b1": tax.b1_distinguishability,
            "b1_min": tax.b1_min,
            "b2": tax.b2_cohesion,
            "b3": tax.b3_leakage,
            "b3_se": tax.b3_stderr,
            "b4": tax.b4_spearman,
        }


@dataclass(slots=True)
class Trajectory:
    """The growth table of a history, one row per step, oldest first."""

    rows: list[TrajectoryRow]

    def table(self) -> list[dict[str, object]]:
        """The rows as plain mappings."""
        return [row.flat() for row in self.rows]

    def column(self, name: str) -> list[float | None]:
        """One column of the table as numbers (None where undefined)."""
        if name not in COLUMNS or name == "message":
            raise KeyError(f"unknown numeric column {name!r}; choose one of {COLUMNS}")
        values: list[float | None] = []
        for row in self.table():
            value = row[name]
            values.append(None if value is None else float(value))  # type: ignore[arg-type]
        return values

    def as_table(self) -> Table:
        """The growth table as a report :class:`~memdir.tables.Table` (floats to 3 digits)."""
        rows = self.table()
        return Table("growth", "Store growth", list(COLUMNS),
                     [[row[c] for c in COLUMNS] for row in rows],  # type: ignore[misc]
                     digits=3, empty="(no snapshot)")

    def to_csv(self) -> str:
        """The table as CSV text."""
        return self.as_table().csv()

    def to_markdown(self) -> str:
        """The table as a markdown table, numbers rounded for reading."""
        return self.as_table().grid()


class _LastMatrix(TfidfCache):
    """A term cache that gives its last matrix back for as long as it is asked for the same texts.

    (``TfidfCache(keep_last=True)`` gives it back once.) The texts are compared
    item by item, identity first, so unchanged labels cost one pass in C.
    """

    def __init__(self) -> None:
        super().__init__()
        self._kept: tuple[list[str], sparse.csr_matrix] | None = None

    def matrix(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """See :meth:`TfidfCache.matrix`; treat the result as read-only."""
        wanted = texts if isinstance(texts, list) else list(texts)
        if self._kept is not None and self._kept[0] == wanted:
            return self._kept[1]
        self._kept = None
        result = super().matrix(wanted)
        self._kept = (wanted, result)
        return result


def measure_history(
    history: History,
    *,
    measurer: Measurer | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Trajectory:
    """Measure every step of a history.

    Inside :func:`memdir.progress.reporting`, a status line tells the steps done
    and, during the first one (which reads and parses every file), how far it is.

    Args:
        history: The store's history.
        measurer: Settings and caches to use (a fresh default one if omitted).
        progress: Called as ``progress(done, total)`` after each step.
    """
    measurer = measurer or Measurer()
    steps: list[Step] = []
    changes: list[dict[str, str | None]] = []
    wanted: set[str] = set()
    for step, changed in history.step_changes():  # one git process for the whole history
        steps.append(step)
        changes.append(changed)
        wanted.update(blob for path, blob in changed.items()
                      if blob is not None and path.endswith(".md") and not measurer.has(blob))
    with reporter(len(steps), "step", first_is_setup=True) as shown:
        _parse(history, measurer, wanted, shown.note)
        return _measure_steps(measurer, steps, changes, shown, progress)


def _parse(history: History, measurer: Measurer, wanted: set[str],
           note: Callable[[str], None]) -> None:
    """Parse every file version of the history (read in one git process).

    Each version is parsed as git gives it and its bytes let go: holding them
    all until the last is parsed (the whole store's bytes at its first step,
    and at 100,000 files git's whole answer beside them) would add twice the
    store's size to the peak.
    """
    note(f"reading {len(wanted):,} file versions")
    for done, (blob, data) in enumerate(history.each_blob(wanted), start=1):
        measurer.summary(blob, data.decode("utf-8", errors="replace"))
        note(f"parsed {done:,}/{len(wanted):,} file versions")


def _measure_steps(measurer: Measurer, steps: list[Step], changes: list[dict[str, str | None]],
                   shown: Progress, progress: Callable[[int, int], None] | None) -> Trajectory:
    """Each step's row, its file list rebuilt from the last step's with what it changed.

    Only what each step changed is kept: a copy of the file list per step would
    hold steps x files entries at once.
    """
    rows: list[TrajectoryRow] = []
    files: dict[str, FileSummary] = {}
    labels = measurer.labels_cache
    # From one step to the next the labels change only where files were added, moved or
    # re-headed: keeping the last label matrix makes B1's weighting free in between.
    measurer.labels_cache = _LastMatrix()
    # Each step's Panel B from the last one's: re-weighting and comparing what changed.
    measurer.steps = panel_b = TaxonomySteps(
        units_cache=measurer.units_cache, labels_cache=measurer.labels_cache,
        min_chars=measurer.min_chars, max_pairs=measurer.max_pairs, seed=measurer.seed,
        b3_sample=measurer.b3_sample, note=shown.note)  # the first step's phases
    try:
        for number, (step, changed) in enumerate(zip(steps, changes, strict=True), start=1):
            for path, new in changed.items():
                if new is None or not path.endswith(".md"):
                    files.pop(path, None)
                else:
                    files[path] = measurer.summary(new, "")
            if number == 1:
                shown.note(f"step 1: the tree of {len(files):,} files")
            metrics = measurer.measure_summaries(files)
            rows.append(TrajectoryRow(step, StepMetrics(metrics.shape, metrics.taxonomy)))
            del metrics  # the tree goes with the next step's
            panel_b.note = None  # later steps are short: their count says enough
            shown.step()
            if progress is not None:
                progress(number, len(steps))
    finally:
        measurer.labels_cache = labels
        measurer.steps = None
    return Trajectory(rows)
