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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from memdir.metrics._files import FileSummary
from memdir.store import ROOT

__all__ = ["HeadingDepth", "Node", "StoreTree", "Unit", "build_tree", "label_words"]

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
    children: list[int] = field(default_factory=list)


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


class _Builder:
    def __init__(self, files: Mapping[str, FileSummary], mode: HeadingDepth) -> None:
        if mode not in ("nesting", "level"):
            raise ValueError(f"heading_depth must be 'nesting' or 'level', not {mode!r}")
        self.files = files
        self.mode = mode
        self.nodes: list[Node] = [Node(0, "root", ROOT, "", ROOT, -1, 0)]
        self.units: list[Unit] = []

    def add(self, kind: NodeKind, name: str, label: str, path: str, parent: int,
            depth: int, level: int = 0, description: str = "") -> int:
        node = Node(len(self.nodes), kind, name, label, path, parent, depth, level, description)
        self.nodes.append(node)
        self.nodes[parent].children.append(node.id)
        return node.id

    def folder(self, level: dict[str, object], parent: int, prefix: str) -> None:
        """Add a folder level depth first (sub-folders, then files, each sorted), iteratively.

        An explicit stack instead of recursion: a store a thousand folders deep is
        measured like any other.
        """
        stack: list[tuple[str, object, str, int, str]] = [("level", level, "", parent, prefix)]
        while stack:
            kind, item, name, parent, prefix = stack.pop()
            if kind == "level":
                assert isinstance(item, dict)
                folders = sorted(k for k in item if k.endswith("/"))
                files = sorted(k for k in item if not k.endswith("/"))
                tasks = [("folder", item[k], k[:-1], parent, prefix) for k in folders]
                tasks += [("file", item[k], k, parent, prefix) for k in files]
                stack.extend(reversed(tasks))
                continue
            depth = self.nodes[parent].depth + 1
            if kind == "folder":
                path = f"{prefix}/{name}"
                node = self.add("folder", name, label_words(name), path, parent, depth)
                stack.append(("level", item, "", node, path))
            else:
                assert isinstance(item, str)
                self.file(item, name, parent, depth)

    def file(self, path: str, name: str, parent: int, depth: int) -> None:
        summary = self.files[path]
        label = f"{label_words(name)} {summary.description}".strip()
        file_node = self.add("file", name, label, path, parent, depth,
                             description=summary.description)
        top = min((h.level for h in summary.headings), default=1) - 1
        ids: list[int] = []
        for head in summary.headings:
            parent_id = file_node if head.parent < 0 else ids[head.parent]
            parent_node = self.nodes[parent_id]
            parent_level = top if head.parent < 0 else parent_node.level
            step = 1 if self.mode == "nesting" else head.level - parent_level
            trail = _trail(summary, head.parent) + [head.text]
            ids.append(
                self.add("heading", head.text, head.text, f"{path} > {' > '.join(trail)}",
                         parent_id, parent_node.depth + step, level=head.level)
            )
        for unit in summary.units:
            node = file_node if unit.heading < 0 else ids[unit.heading]
            key = self.nodes[node].path
            size = len(unit.text.encode("utf-8"))
            self.units.append(
                Unit(key, node, self.nodes[node].parent, path, unit.line, unit.text, size)
            )



def _trail(summary: FileSummary, parent: int) -> list[str]:
    trail: list[str] = []
    while parent >= 0:
        trail.append(summary.headings[parent].text)
        parent = summary.headings[parent].parent
    return trail[::-1]


def build_tree(
    files: Mapping[str, FileSummary], heading_depth: HeadingDepth = "nesting"
) -> StoreTree:
    """Assemble the combined tree of a store from its files' summaries.

    Args:
        files: Agent-facing path (``/memories/...``, ``.md`` only) -> summary.
        heading_depth: How headings add depth; see the module notes.
    """
    paths = sorted(p for p in files if p.endswith(".md"))
    builder = _Builder(files, heading_depth)
    builder.folder(_folder_tree(paths), 0, ROOT)
    units = sorted(builder.units, key=lambda u: (u.file, u.line, u.key))
    return StoreTree(builder.nodes, units, {p: files[p] for p in paths})
