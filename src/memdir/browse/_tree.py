"""The taxonomy tree of a store state as nested nodes, filtered, for the tree templates."""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.browse._state import StoreState
from memdir.store import ROOT, Heading, StoreError, parse_document

__all__ = ["HEADINGS_FILES", "Node", "build_nodes"]

HEADINGS_FILES = 200
"""Headings are listed under each file when the tree shows at most this many files."""


@dataclass
class Node:
    """A folder or a file of the tree."""

    path: str
    is_dir: bool
    size: int = 0
    description: str | None = None
    headings: list[Heading] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    files: int = 0
    """Files at or below this node."""

    @property
    def name(self) -> str:
        """The last part of the path."""
        return self.path.rsplit("/", 1)[-1]


def _rows(state: StoreState) -> list[tuple[str, int, str | None]]:
    """(path, size, description) of every file of the state."""
    if state.step is None:
        try:
            return [(e.path, e.size, e.description) for e in state.entry.store.walk()
                    if not e.is_dir]
        except StoreError:
            return []
    texts = state.read_all()
    rows = []
    for path in sorted(texts):
        doc = parse_document(path, texts[path])
        rows.append((path, len(texts[path].encode("utf-8")), doc.description or None))
    return rows


def _matches(needle: str, path: str, description: str | None) -> bool:
    return needle in path.lower() or (description is not None and needle in description.lower())


def build_nodes(state: StoreState, needle: str = "") -> tuple[Node, int]:
    """The tree of a state, keeping files whose path or description contains ``needle``.

    Returns:
        The root node and the number of files kept.
    """
    needle = needle.strip().lower()
    rows = [r for r in _rows(state) if not needle or _matches(needle, r[0], r[2])]
    root = Node(ROOT, True)
    folders = {ROOT: root}
    for path, size, description in rows:
        parent = root
        parts = path.removeprefix(ROOT + "/").split("/")
        for depth in range(1, len(parts)):
            folder = ROOT + "/" + "/".join(parts[:depth])
            if folder not in folders:
                folders[folder] = Node(folder, True)
                parent.children.append(folders[folder])
            parent = folders[folder]
        parent.children.append(Node(path, False, size, description))
    if len(rows) <= HEADINGS_FILES:
        _add_headings(state, root)
    _order(root)
    return root, len(rows)


def _add_headings(state: StoreState, node: Node) -> None:
    for child in node.children:
        if child.is_dir:
            _add_headings(state, child)
            continue
        doc = state.document(child.path)
        if doc is not None:
            child.headings = doc.headings


def _order(node: Node) -> int:
    node.children.sort(key=lambda n: (not n.is_dir, n.name))
    node.files = sum(_order(c) if c.is_dir else 1 for c in node.children)
    node.size = sum(c.size for c in node.children)
    return node.files
