"""Measuring one store state: Panels A and B together, with caches that outlive a call."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass

from memdir.metrics._files import FileSummary, summarize
from memdir.metrics._shape import Dangling, ShapeMetrics, XrefResolver, gini, state_resolver
from memdir.metrics._steps import TaxonomySteps
from memdir.metrics._taxonomy import MIN_UNIT_CHARS, TaxonomyMetrics, measure_taxonomy
from memdir.metrics._text import TfidfCache
from memdir.metrics._tree import HeadingDepth, StoreTree, TreeBuilder, TreeCounts
from memdir.store import Document, Store, StoreError, XRef, check_xref, find_section

__all__ = ["Measurer", "StoreMetrics", "measure_state", "measure_store", "read_state"]


@dataclass(slots=True)
class StoreMetrics:
    """Both panels of one store state, and the tree they were computed on."""

    shape: ShapeMetrics
    taxonomy: TaxonomyMetrics
    tree: StoreTree

    def to_dict(self) -> dict[str, object]:
        """Both panels as a plain mapping (the tree is left out)."""
        return {"shape": self.shape.to_dict(), "taxonomy": self.taxonomy.to_dict()}


class Measurer:
    """Measures store states, keeping parsed files and term counts between calls.

    Files are cached by a content key (a git blob id, or a digest of the text), so
    a history of many snapshots parses each distinct file version once. The tree
    of each state is built from the last one (see :class:`~memdir.metrics._tree.TreeBuilder`),
    and Panel A's sums come with it, so a state that differs from the last in a few
    files costs little more than those files, besides Panel B (refitted on every state).
    Trees measured by one ``Measurer`` share what did not change: treat them as
    read-only.

    Args:
        heading_depth: How headings add depth (see :func:`memdir.metrics.build_tree`).
        min_chars: Units shorter than this are ignored by Panel B.
        max_pairs: Most unit pairs B4 correlates before it samples.
        seed: Seed for B4's sample.
        b3_sample: Units B3 compares, in place of its budget's sample (None: the budget).
        keep_labels: Keep the labels' term counts for the next state measured; off,
            B1 counts each state's labels afresh and lets the counts go once it is
            done (some 100 MB at 100,000 files), for a single measurement (health).
    """

    def __init__(
        self,
        *,
        heading_depth: HeadingDepth = "nesting",
        min_chars: int = MIN_UNIT_CHARS,
        max_pairs: int = 5000,
        seed: int = 0,
        b3_sample: int | None = None,
        keep_labels: bool = True,
    ) -> None:
        self.heading_depth: HeadingDepth = heading_depth
        self.keep_labels = keep_labels
        self.b3_sample = b3_sample
        self.min_chars = min_chars
        self.max_pairs = max_pairs
        self.seed = seed
        self.units_cache = TfidfCache(keep_last=True)  # Panel B, then the duplicate search
        self.labels_cache = TfidfCache()
        self._summaries: dict[str, FileSummary] = {}
        self._sections: dict[tuple[str, tuple[str, ...]], bool] = {}
        self._builder = TreeBuilder(heading_depth)
        self._refs: dict[tuple[str, tuple[str, ...]], tuple[FileSummary | None, str | None]] = {}
        """(target, section) -> the target's summary when resolved, and why it did not resolve."""
        self.steps: TaxonomySteps | None = None
        """When set, Panel B of each state is computed from the last one's (a history's run)."""

    def summary(self, key: str, text: str) -> FileSummary:
        """The parsed form of a file version, cached under ``key``."""
        found = self._summaries.get(key)
        if found is None:
            found = summarize(text)
            self._summaries[key] = found
        return found

    def has(self, key: str) -> bool:
        """Whether a file version is already parsed."""
        return key in self._summaries

    def tree(self, files: Mapping[str, FileSummary]) -> StoreTree:
        """The combined tree of parsed files (built from the last tree this measurer built)."""
        if self._builder.mode != self.heading_depth:
            self._builder = TreeBuilder(self.heading_depth)
        return self._builder.build(files)

    def measure_summaries(
        self, files: Mapping[str, FileSummary], resolver: XrefResolver | None = None
    ) -> StoreMetrics:
        """Measure a state given as path -> parsed file.

        Args:
            files: Agent path -> parsed file.
            resolver: Checks each cross-reference; by default against ``files``
                (answers kept while a reference's target is the same file version).
        """
        tree = self.tree(files)
        shape = _shape(tree, self._builder.counts, resolver or self._state_resolver(tree))
        taxonomy = self.steps.measure(tree) if self.steps is not None else measure_taxonomy(
            tree,
            units_cache=self.units_cache,
            labels_cache=self.labels_cache if self.keep_labels else None,
            min_chars=self.min_chars,
            max_pairs=self.max_pairs,
            seed=self.seed,
            b3_sample=self.b3_sample,
        )
        return StoreMetrics(shape, taxonomy, tree)

    def _state_resolver(self, tree: StoreTree) -> XrefResolver:
        """:func:`state_resolver` for ``tree``, each answer kept while its target is unchanged."""
        resolve = state_resolver(tree, self._sections)
        known = self._refs

        def cached(ref: XRef) -> str | None:
            target = tree.files.get(ref.target)
            key = (ref.target, ref.section)
            hit = known.get(key)
            if hit is not None and hit[0] is target:
                return hit[1]
            reason = resolve(ref)
            known[key] = (target, reason)
            return reason

        return cached

    def measure(self, files: Mapping[str, str]) -> StoreMetrics:
        """Measure a state given as agent-facing path -> text (non-``.md`` paths ignored)."""
        summaries = {
            path: self.summary(_digest(text), text)
            for path, text in files.items()
            if path.endswith(".md")
        }
        return self.measure_summaries(summaries)


def _shape(tree: StoreTree, counts: TreeCounts, resolve: XrefResolver) -> ShapeMetrics:
    """Panel A from the builder's sums, as :func:`~memdir.metrics.measure_shape` computes it.

    The sums make every count but the dangling references (each reference is
    resolved) and the size Gini (the units' sizes) free of a walk over the nodes.
    """
    dangling: list[Dangling] = []
    for path, summary in tree.files.items():
        for ref in summary.xrefs:
            reason = resolve(ref)
            if reason is not None:
                dangling.append(Dangling(path, ref.line, ref.target, reason))
    leaves = counts.leaves if tree.files else 0
    sackin = counts.sackin if tree.files else 0
    return ShapeMetrics(
        folders=counts.folders,
        files=len(tree.files),
        sections=counts.sections,
        bytes=counts.bytes,
        units=len(tree.units),
        leaves=leaves,
        sackin=sackin,
        mean_leaf_depth=sackin / leaves if leaves else None,
        max_depth=max(counts.depths, default=0),
        # every node but the root is one child of one node
        mean_fanout=(len(tree.nodes) - 1) / counts.internal if counts.internal else None,
        size_gini=gini([u.bytes for u in tree.units]),
        xrefs=counts.xrefs,
        dangling=dangling,
    )


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_state(store: Store, unreadable: dict[str, str] | None = None) -> dict[str, str]:
    """Every markdown file of a live store as ``{path: text}``.

    Args:
        store: The live store.
        unreadable: When given, a file that cannot be read (not UTF-8, gone
            meanwhile) is left out and recorded here with the reason, so the rest
            is still measured; when None, such a file raises ``StoreError``.
    """
    return dict(_texts(store, unreadable))


def _texts(store: Store, unreadable: dict[str, str] | None) -> Iterator[tuple[str, str]]:
    """:func:`read_state`'s files one at a time, so a caller need not hold every text."""
    nodes = [node for node in store.tree() if node.kind == "memory"]
    for node, data in store.read_nodes(nodes):  # one handle per folder, not a lookup per file
        path = node.virtual
        text = None
        if data is not None:
            with suppress(UnicodeDecodeError):
                text = data.decode("utf-8")  # no newline translation, as Store.read
        del data
        if text is None:  # gone, replaced or not UTF-8: Store.read raises what it is
            try:
                text = store.read(path)
            except StoreError as exc:
                if unreadable is None:
                    raise
                unreadable[path] = str(exc)
                continue
        yield path, text


def measure_state(files: Mapping[str, str], *, seed: int = 0,
                  heading_depth: HeadingDepth = "nesting") -> StoreMetrics:
    """Measure a store state given as ``{"/memories/...md": text}``."""
    return Measurer(seed=seed, heading_depth=heading_depth).measure(files)


def _walked_file(store: Store, target: str, walked: Mapping[str, object]) -> bool:
    if target not in walked:
        return False
    try:
        store.split(target, "file")
    except StoreError:  # a name the store refuses: check_xref says why
        return False
    return True


def measure_store(store: Store, *, seed: int = 0, heading_depth: HeadingDepth = "nesting",
                  measurer: Measurer | None = None,
                  unreadable: dict[str, str] | None = None) -> StoreMetrics:
    """Measure a live store; cross-references are checked with :func:`memdir.store.check_xref`.

    ``unreadable``, when given, collects the files left out because they cannot
    be read (see :func:`read_state`); otherwise such a file raises ``StoreError``.
    """
    measurer = measurer or Measurer(seed=seed, heading_depth=heading_depth)
    # Each text is parsed as it is read and then let go: the summaries hold what the
    # measures read, and holding every text beside them would double the memory.
    summaries = {path: measurer.summary(_digest(text), text)
                 for path, text in _texts(store, unreadable)}
    cache: dict[str, Document] = {}
    targets: dict[str, str | None] = {}  # target -> why it is no file (None: it is one)

    def resolve(ref: XRef) -> str | None:
        """:func:`check_xref`'s answer, each target checked once.

        Sections are looked for in the summary already parsed, so a store of many
        references reads no file twice. A target spelled as the path of a file the
        walk just read, a path the store accepts, is a file (as lint takes it): only
        other spellings go through the store's path check, a ``realpath`` each.
        """
        if ref.target not in targets:
            targets[ref.target] = None if _walked_file(store, ref.target, summaries) else \
                check_xref(store, XRef(ref.target, (), ref.line))
        problem = targets[ref.target]
        if problem is not None or not ref.section:
            return problem
        summary = summaries.get(ref.target)
        if summary is None:  # a spelling other than the file's own path: the store resolves it
            return check_xref(store, ref, cache)
        try:
            find_section(summary.body, ref.section, summary.body_line)
        except LookupError:
            return f"{ref.target} has no section {' > '.join(ref.section)}"
        return None

    return measurer.measure_summaries(summaries, resolve)
