"""Panel A, the store's shape: counts, depth, fanout, size concentration, references."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from memdir.metrics._tree import StoreTree
from memdir.store import XRef, find_section

__all__ = ["Dangling", "ShapeMetrics", "XrefResolver", "gini", "measure_shape", "state_resolver"]

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
