"""Panel A, the store's shape: counts, depth, fanout, size concentration, references.

:data:`SHAPE_COLUMNS` declares each measure once: its growth-table column, its
title, and where it is shown (the growth charts of the plots and the history
page, the study's store table, a sentence of the health report). The growth
table, the charts, the study report and the health report read it, so a new
measure is a :class:`ShapeMetrics` field, its computation in
:func:`measure_shape`, and one entry here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from memdir.metrics._tree import StoreTree
from memdir.store import XRef, find_section

__all__ = [
    "SHAPE_COLUMNS",
    "Dangling",
    "ShapeColumn",
    "ShapeMetrics",
    "XrefResolver",
    "gini",
    "measure_shape",
    "state_resolver",
]

XrefResolver = Callable[[XRef], "str | None"]
"""Returns why a cross-reference does not resolve, or None when it does."""


@dataclass(frozen=True, slots=True)
class Dangling:
    """A cross-reference that resolves to nothing."""

    path: str
    line: int
    target: str
    reason: str


@dataclass(slots=True)
class ShapeMetrics:
    """Panel A of one store state.

    ``mean_leaf_depth`` is the Sackin index (sum of leaf depths) over the number of
    leaves; ``mean_fanout`` is the mean child count of nodes that have children;
    ``size_gini`` is the Gini coefficient of content-unit sizes in bytes (0 when
    all units are the same size, towards 1 when one unit holds nearly everything).
    """

    folders: int
    files: int
    sections: int
    bytes: int
    units: int
    leaves: int
    sackin: int
    mean_leaf_depth: float | None
    max_depth: int
    mean_fanout: float | None
    size_gini: float | None
    xrefs: int
    dangling: list[Dangling] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """A plain mapping for JSON."""
        data = asdict(self)
        data["dangling_count"] = len(self.dangling)
        return data


@dataclass(frozen=True, slots=True)
class ShapeColumn:
    """One shape measure as every table, chart and report shows it.

    Attributes:
        column: Its name in the growth table (:data:`memdir.metrics.COLUMNS`).
        field: The :class:`ShapeMetrics` attribute it reads (a list counts its items).
        title: Its label in charts and tables.
        count: Whole numbers (charts tick integers only).
        chart: Drawn in the growth charts (the PNG plots and the history page).
        profile: A column of the study's store table.
        reading: A sentence for the health report, ``{value}`` filled in; None leaves
            the measure to the report's own sentences.
    """

    column: str
    field: str
    title: str
    count: bool = False
    chart: bool = True
    profile: bool = False
    reading: str | None = None

    def value(self, shape: ShapeMetrics) -> float | int | None:
        """This measure of ``shape``."""
        value = getattr(shape, self.field)
        return len(value) if isinstance(value, list) else value


SHAPE_COLUMNS: tuple[ShapeColumn, ...] = (
    ShapeColumn("files", "files", "files", count=True),
    ShapeColumn("folders", "folders", "folders", count=True, profile=True),
    ShapeColumn("sections", "sections", "sections", count=True, profile=True),
    ShapeColumn("bytes", "bytes", "bytes", count=True),
    ShapeColumn("units", "units", "content units", count=True, chart=False),
    ShapeColumn("mean_depth", "mean_leaf_depth", "mean leaf depth", profile=True),
    ShapeColumn("max_depth", "max_depth", "max depth", count=True, profile=True),
    ShapeColumn("mean_fanout", "mean_fanout", "mean fanout", chart=False),
    ShapeColumn("size_gini", "size_gini", "size Gini", chart=False),
    ShapeColumn("xrefs", "xrefs", "cross-references", count=True),
    ShapeColumn("dangling", "dangling", "dangling references", count=True),
)
"""Every shape measure, in growth-table order."""


def gini(sizes: Sequence[float]) -> float | None:
    """The Gini coefficient of non-negative sizes; None for no sizes, 0 when all are zero."""
    if not sizes:
        return None
    values = np.sort(np.asarray(sizes, dtype=np.float64))
    total = values.sum()
    if total <= 0:
        return 0.0
    n = len(values)
    ranks = np.arange(1, n + 1)
    return float(2.0 * np.sum(ranks * values) / (n * total) - (n + 1) / n)


def state_resolver(
    tree: StoreTree, memo: dict[tuple[str, tuple[str, ...]], bool] | None = None
) -> XrefResolver:
    """Resolve references against the files of a tree (no folder on disk needed).

    Args:
        tree: The state whose files references must point at.
        memo: Remembers whether a section exists in a given body (keyed by the body's
            digest), so a history does not re-parse a target for every step.
    """
    known = {} if memo is None else memo

    def resolve(ref: XRef) -> str | None:
        summary = tree.files.get(ref.target)
        if summary is None:
            return f"{ref.target} does not exist"
        if ref.section:
            key = (hashlib.sha1(summary.body.encode("utf-8")).hexdigest(), ref.section)
            if key not in known:
                try:
                    find_section(summary.body, ref.section)
                    known[key] = True
                except LookupError:
                    known[key] = False
            if not known[key]:
                return f"{ref.target} has no section {' > '.join(ref.section)}"
        return None

    return resolve


def measure_shape(tree: StoreTree, resolver: XrefResolver | None = None) -> ShapeMetrics:
    """Compute Panel A over a combined tree.

    Args:
        tree: The store's combined tree.
        resolver: Checks each cross-reference; by default against the tree's own files.
    """
    resolve = resolver or state_resolver(tree)
    empty = not tree.files
    leaves = [] if empty else tree.leaves()
    internal = tree.internal()
    sackin = sum(n.depth for n in leaves)
    dangling: list[Dangling] = []
    refs = 0
    for path, summary in tree.files.items():
        for ref in summary.xrefs:
            refs += 1
            reason = resolve(ref)
            if reason is not None:
                dangling.append(Dangling(path, ref.line, ref.target, reason))
    return ShapeMetrics(
        folders=sum(1 for n in tree.nodes if n.kind == "folder"),
        files=len(tree.files),
        sections=sum(1 for n in tree.nodes if n.kind == "heading"),
        bytes=sum(s.bytes for s in tree.files.values()),
        units=len(tree.units),
        leaves=len(leaves),
        sackin=sackin,
        mean_leaf_depth=sackin / len(leaves) if leaves else None,
        max_depth=max((n.depth for n in tree.nodes), default=0),
        mean_fanout=(
            sum(len(n.children) for n in internal) / len(internal) if internal else None
        ),
        size_gini=gini([u.bytes for u in tree.units]),
        xrefs=refs,
        dangling=dangling,
    )
