"""The taxonomy tree of a store state as nested nodes, filtered, for the tree templates."""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.browse._state import StoreState
from memdir.store import ROOT, Heading, StoreError

__all__ = ["FILES_SHOWN", "HEADINGS_FILES", "Node", "build_nodes"]

HEADINGS_FILES = 200
"""Headings are listed under each file when the tree shows at most this many files."""
FILES_SHOWN = 1000
"""Past this many files, folders below the top are shown collapsed, each with a link
that opens it as the top of the tree (the page stays small on a store of thousands)."""


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
    collapsed: bool = False
    """The folder's files are left out of this page (open the folder to see them)."""

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
    return [(path, len(texts[path].encode("utf-8")), state.outline(path)[0])
            for path in sorted(texts)]


def _matches(needle: str, path: str, description: str | None) -> bool:
    return needle in path.lower() or (description is not None and needle in description.lower())


def build_nodes(state: StoreState, needle: str = "", under: str = ROOT) -> tuple[Node, int]:
    """The tree below folder ``under``, keeping files whose path or description has ``needle``.

    Returns:
        The top node (``under``) and the number of files kept.
    """
    needle = needle.strip().lower()
    top = under.rstrip("/") or ROOT
    rows = [r for r in _rows(state) if r[0].startswith(top + "/")
            and (not needle or _matches(needle, r[0], r[2]))]
    root = Node(top, True)
    folders = {top: root}
    for path, size, description in rows:
        parent = root
        parts = path.removeprefix(top + "/").split("/")
        for depth in range(1, len(parts)):
            folder = top + "/" + "/".join(parts[:depth])
            if folder not in folders:
                folders[folder] = Node(folder, True)
                parent.children.append(folders[folder])
            parent = folders[folder]
        parent.children.append(Node(path, False, size, description))
    if len(rows) <= HEADINGS_FILES:
        _add_headings(state, root)
    _order(root)
    if len(rows) > FILES_SHOWN:
        for child in root.children:
            _collapse(child)
    return root, len(rows)


def _collapse(node: Node) -> None:
    if not node.is_dir:
        return
    kept = [c for c in node.children if c.is_dir]
    node.collapsed = len(kept) < len(node.children)
    node.children = kept
    for child in kept:
        _collapse(child)


def _add_headings(state: StoreState, node: Node) -> None:
    for child in node.children:
        if child.is_dir:
            _add_headings(state, child)
            continue
        child.headings = state.outline(child.path)[1]


def _order(node: Node) -> int:
    node.children.sort(key=lambda n: (not n.is_dir, n.name))
    node.files = sum(_order(c) if c.is_dir else 1 for c in node.children)
    node.size = sum(c.size for c in node.children)
    return node.files
