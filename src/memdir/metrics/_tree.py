"""The combined tree of a store: root, folders, files, then the headings inside files.

Depth counts edges from the root: a top-level file has depth 1, its outermost
headings depth 2. How a heading's depth is set is a choice (``heading_depth``):

- ``"nesting"`` (the default): a heading sits one level below the heading that
  encloses it (or below its file), whatever the gap in ``#`` marks, so ``#``
  followed by ``###`` adds one level, not two. This is our reading of the paper's
  rule that a heading which skips levels adds one.
- ``"level"``: depth follows the ``#`` count: a heading sits ``level - parent
  level`` below its enclosing heading, and a file's outermost headings sit one
  below the file, so ``#`` followed by ``###`` adds two.

Content units are the leaves that carry text: a section without subsections, or
a file without headings.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from memdir.metrics._files import FileSummary, utf8_size
from memdir.store import ROOT

__all__ = [
    "FileCounts", "HeadingDepth", "Node", "StoreTree", "TreeBuilder", "TreeCounts", "Unit",
    "build_tree", "collector_paused", "label_words",
]

HeadingDepth = Literal["nesting", "level"]
NodeKind = Literal["root", "folder", "file", "heading"]


def label_words(name: str) -> str:
    """A file or folder name as words: ``2024-lisbon_trip.md`` -> ``2024 lisbon trip``."""
    stem = name.removesuffix(".md")
    return stem.replace("-", " ").replace("_", " ")


@dataclass(slots=True)
class Node:
    """A node of the combined tree."""

    id: int
    kind: NodeKind
    name: str
    """What a listing shows: a folder or file name, or a heading's text."""
    label: str
    """The text compared for sibling distinguishability (B1)."""
    path: str
    """The folder or file path; for a heading, its file path and heading path."""
    parent: int
    depth: int
    level: int = 0
    """Heading level (1-6); 0 for the root, folders and files."""
    description: str = ""
    children: tuple[int, ...] = ()
    """Child node ids in order; a tuple, so a leaf (most nodes) holds the one empty tuple."""


@dataclass(frozen=True, slots=True)
class Unit:
    """A content unit: its key, the leaf node it is, its sibling group and its text."""

    key: str
    node: int
    parent: int
    file: str
    line: int
    text: str
    bytes: int


@dataclass(slots=True)
class StoreTree:
    """The nodes (root first, then depth-first) and the content units of a store."""

    nodes: list[Node]
    units: list[Unit]
    files: dict[str, FileSummary]

    def ancestors(self, node: int) -> list[int]:
        """Node ids from the root down to ``node``, inclusive."""
        chain = [node]
        while self.nodes[chain[-1]].parent >= 0:
            chain.append(self.nodes[chain[-1]].parent)
        return chain[::-1]

    def leaves(self) -> list[Node]:
        """Nodes without children (an empty store's only leaf is its root)."""
        return [n for n in self.nodes if not n.children]

    def internal(self) -> list[Node]:
        """Nodes with at least one child."""
        return [n for n in self.nodes if n.children]


def _folder_tree(paths: list[str]) -> dict[str, object]:
    top: dict[str, object] = {}
    for path in paths:
        parts = path[len(ROOT) + 1 :].split("/")
        level = top
        for part in parts[:-1]:
            child = level.setdefault(part + "/", {})
            assert isinstance(child, dict)
            level = child
        level[parts[-1]] = path
    return top


@dataclass(frozen=True, slots=True)
class FileCounts:
    """What one file adds to Panel A's sums, wherever it sits (depths relative to the file).

    Attributes:
        sections: Its headings.
        leaves: Its nodes without children (the file itself when it has no heading).
        leaf_depth: The sum of its leaves' depths below the file node.
        internal: Its nodes with children (the file and its headings that have sub-headings).
        max_depth: Its deepest node's depth below the file node.
    """

    sections: int
    leaves: int
    leaf_depth: int
    internal: int
    max_depth: int


@dataclass(frozen=True, slots=True)
class _Block:
    """One file's nodes and units, placed at one position of a tree.

    Node ids are absolute, so a block is reused as it is only at the same place
    (``base``, ``parent``, ``depth``); its nodes alone are reused when the file's
    headings and description are the same (the same ``shape``).
    """

    summary: FileSummary
    base: int
    parent: int
    depth: int
    nodes: tuple[Node, ...]
    units: tuple[Unit, ...]
    counts: FileCounts


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector while a tree or a measurement is made, then restore it.

    A tree and a measurement make millions of small objects (summaries, nodes,
    units, term lists) that hold no cycles and live as long as the work does.
    With the collector running, every few hundred new objects set off a
    collection of the young ones, and as the heap grows a full one walks
    everything alive: over half of a whole build at 10,000 files went there, and
    at 100,000 files the first objects made after the tree (Panel A's references)
    paid about 4 s of CPU for the collections the tree's objects had put off.
    Reference counts free all of it, so the collector is simply off until the
    work ends; a caller that had it off keeps it off.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _shape(summary: FileSummary) -> tuple[object, ...]:
    """What a file's nodes depend on besides their place: description and heading outline."""
    return (summary.description, *((h.level, h.text, h.parent) for h in summary.headings))


@dataclass(slots=True)
class TreeCounts:
    """Panel A's sums over the whole tree, kept by :class:`TreeBuilder` with each tree."""

    folders: int = 0
    sections: int = 0
    bytes: int = 0
    leaves: int = 0
    sackin: int = 0
    internal: int = 0
    xrefs: int = 0
    depths: dict[int, int] = field(default_factory=dict)
    """How many files reach each greatest depth (the tree's maximum is the largest key)."""

    def add(self, block: _Block, sign: int) -> None:
        """Count a file's block in (``sign`` 1) or out (``sign`` -1)."""
        c = block.counts
        self.sections += sign * c.sections
        self.bytes += sign * block.summary.bytes
        self.leaves += sign * c.leaves
        self.sackin += sign * (c.leaf_depth + c.leaves * block.depth)
        self.internal += sign * c.internal
        self.xrefs += sign * len(block.summary.xrefs)
        deepest = block.depth + c.max_depth
        left = self.depths.get(deepest, 0) + sign
        if left:
            self.depths[deepest] = left
        else:
            del self.depths[deepest]


class TreeBuilder:
    """Builds combined trees, reusing what it built for the files that did not change.

    Each file's nodes and units are kept with the position they were built at.
    When a new state has the same paths and the changed files keep their
    headings and description, the node list is the last one (shared) and only
    the changed files' units are made again; otherwise the folders are laid out
    again and each file's block is reused where it lands at the same place.
    The trees are those :func:`build_tree` gives; trees from one builder share
    the nodes and units that did not change, so treat them as read-only.

    Args:
        heading_depth: How headings add depth; see the module notes.
    """

    def __init__(self, heading_depth: HeadingDepth = "nesting") -> None:
        if heading_depth not in ("nesting", "level"):
            raise ValueError(
                f"heading_depth must be 'nesting' or 'level', not {heading_depth!r}")
        self.mode: HeadingDepth = heading_depth
        self._blocks: dict[str, _Block] = {}
        self._unit_start: dict[str, int] = {}
        self._sizes: dict[int, int] = {}
        """One int object per unit size: sizes repeat, and an int past 256 takes 28 bytes."""
        self._last: StoreTree | None = None
        self.counts = TreeCounts()
        """Panel A's sums for the last tree built."""

    @property
    def last(self) -> StoreTree | None:
        """The last tree built."""
        return self._last

    def build(self, files: Mapping[str, FileSummary]) -> StoreTree:
        """The combined tree of ``files`` (agent path -> summary; non-``.md`` paths ignored)."""
        last = self._last
        tree = None if last is None else self._update(last, files)
        if tree is None:
            with collector_paused():
                tree = self._rebuild(files)
        self._last = tree
        return tree

    def _update(self, last: StoreTree, files: Mapping[str, FileSummary]) -> StoreTree | None:
        """The new tree when only files' bodies changed, or None when the layout must change."""
        old = last.files
        if len(old) != sum(1 for p in files if p.endswith(".md")):
            return None
        changed: list[tuple[str, FileSummary]] = []
        for path, summary in files.items():
            before = old.get(path)
            if before is summary:
                continue
            if before is None:
                if path.endswith(".md"):
                    return None  # a new path (and so one gone): the layout changes
                continue
            if _shape(before) != _shape(summary):
                return None
            changed.append((path, summary))
        if not changed:
            return StoreTree(last.nodes, last.units, last.files)  # shared: read-only
        units = list(last.units)
        new_files = dict(old)
        for path, summary in changed:
            block = self._blocks[path]
            self.counts.add(block, -1)
            block = self._place(path, summary, block.base, block.parent, block.depth, block)
            self.counts.add(block, 1)
            self._blocks[path] = block
            start = self._unit_start[path]
            units[start : start + len(block.units)] = block.units
            new_files[path] = summary
        return StoreTree(last.nodes, units, new_files)

    def _rebuild(self, files: Mapping[str, FileSummary]) -> StoreTree:
        """Lay the folders out again, reusing each file's block where it lands in place."""
        paths = sorted(p for p in files if p.endswith(".md"))
        nodes: list[Node] = [Node(0, "root", ROOT, "", ROOT, -1, 0)]
        kids: dict[int, list[int]] = {}  # the root's and each folder's children, as they come
        blocks: dict[str, _Block] = {}
        counts = TreeCounts()
        stack: list[tuple[str, object, str, int, str]] = [
            ("level", _folder_tree(paths), "", 0, ROOT)]
        while stack:  # an explicit stack: a store a thousand folders deep is measured too
            kind, item, name, parent, prefix = stack.pop()
            if kind == "level":
                assert isinstance(item, dict)
                folders = sorted(k for k in item if k.endswith("/"))
                names = sorted(k for k in item if not k.endswith("/"))
                tasks = [("folder", item[k], k[:-1], parent, prefix) for k in folders]
                tasks += [("file", item[k], k, parent, prefix) for k in names]
                stack.extend(reversed(tasks))
                continue
            depth = nodes[parent].depth + 1
            kids.setdefault(parent, []).append(len(nodes))
            if kind == "folder":
                path = f"{prefix}/{name}"
                nodes.append(Node(len(nodes), "folder", name, label_words(name), path, parent,
                                  depth))
                counts.folders += 1
                stack.append(("level", item, "", len(nodes) - 1, path))
                continue
            assert isinstance(item, str)
            summary = files[item]
            block = self._blocks.get(item)
            if block is None or block.base != len(nodes) or block.parent != parent \
                    or block.depth != depth:
                block = self._place(item, summary, len(nodes), parent, depth, None)
            elif block.summary is not summary:
                same = _shape(block.summary) == _shape(summary)
                block = self._place(item, summary, len(nodes), parent, depth,
                                    block if same else None)
            nodes.extend(block.nodes)
            blocks[item] = block
            counts.add(block, 1)
        for parent, children in kids.items():
            nodes[parent].children = tuple(children)
        if paths:
            counts.internal += 1 + counts.folders  # the root and every folder have children
        units: list[Unit] = []
        starts: dict[str, int] = {}
        for path in paths:
            starts[path] = len(units)
            units.extend(blocks[path].units)
        self._blocks, self._unit_start, self.counts = blocks, starts, counts
        return StoreTree(nodes, units, {p: files[p] for p in paths})

    def _place(self, path: str, summary: FileSummary, base: int, parent: int, depth: int,
               like: _Block | None) -> _Block:
        """A file's block at ``base``, with the nodes and counts of ``like`` when given."""
        if like is not None:
            nodes, counts = like.nodes, like.counts
        else:
            nodes, counts = self._nodes(path, summary, base, parent, depth)
        made: list[Unit] = []
        sizes = self._sizes
        for u in summary.units:
            leaf = nodes[u.heading + 1]
            size = utf8_size(u.text)
            made.append(Unit(leaf.path, leaf.id, leaf.parent, path, u.line, u.text,
                             sizes.setdefault(size, size)))
        # A summary's units come in line order, each at its own line (its heading's):
        # the sort by (line, key) is kept for a summary made otherwise.
        units = made if _in_order(made) else sorted(made, key=lambda u: (u.line, u.key))
        return _Block(summary, base, parent, depth, nodes, tuple(units), counts)

    def _nodes(self, path: str, summary: FileSummary, base: int, parent: int, depth: int
               ) -> tuple[tuple[Node, ...], FileCounts]:
        """A file's node and its headings' nodes (ids from ``base``), and what they count."""
        name = path.rsplit("/", 1)[1]
        label = f"{label_words(name)} {summary.description}".strip()
        made = [Node(base, "file", name, label, path, parent, depth,
                     description=summary.description)]
        heads = summary.headings
        top = min((h.level for h in heads), default=1) - 1
        nesting = self.mode == "nesting"
        kids: dict[int, list[int]] = {}  # position in ``made`` -> its children's ids
        for k, head in enumerate(heads):
            up = made[head.parent + 1]  # the file node when the heading has no parent heading
            up_level = top if head.parent < 0 else up.level
            step = 1 if nesting else head.level - up_level
            node = Node(base + 1 + k, "heading", head.text, head.text,
                        f"{up.path} > {head.text}", up.id, up.depth + step, head.level)
            kids.setdefault(head.parent + 1, []).append(node.id)
            made.append(node)
        for at, children in kids.items():
            made[at].children = tuple(children)
        leaves = [n.depth - depth for n in made if not n.children]
        counts = FileCounts(sections=len(heads), leaves=len(leaves), leaf_depth=sum(leaves),
                            internal=len(made) - len(leaves),
                            max_depth=max(n.depth for n in made) - depth)
        return tuple(made), counts


def _in_order(units: list[Unit]) -> bool:
    """Whether ``units`` are sorted by line with no line twice (so by ``(line, key)`` too)."""
    return all(a.line < b.line for a, b in pairwise(units))


def build_tree(
    files: Mapping[str, FileSummary], heading_depth: HeadingDepth = "nesting"
) -> StoreTree:
    """Assemble the combined tree of a store from its files' summaries.

    Args:
        files: Agent-facing path (``/memories/...``, ``.md`` only) -> summary.
        heading_depth: How headings add depth; see the module notes.
    """
    return TreeBuilder(heading_depth).build(files)
