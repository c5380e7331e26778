"""The taxonomy tree of a store state as nested nodes, filtered, for the tree templates."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from memdir.browse._state import StoreState
from memdir.store import ROOT, Heading, StoreError

__all__ = ["ENTRIES_SHOWN", "FILES_SHOWN", "HEADINGS_FILES", "Node", "build_nodes"]

HEADINGS_FILES = 200
"""Headings are listed under each file when the tree shows at most this many files."""
FILES_SHOWN = 1000
"""Past this many files, folders below the top are shown collapsed, each with a link
that opens it as the top of the tree (the page stays small on a store of thousands)."""
ENTRIES_SHOWN = 2000
"""At most this many folders and files are drawn: the tree is shown level by level from
the top while the levels fit, and the folders of the last level drawn open on their own
page. A page therefore stays well under a megabyte however many folders the store has."""


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
    left_out: int = 0
    """Children of this node not drawn, past :data:`ENTRIES_SHOWN` (the top node only)."""

    @property
    def name(self) -> str:
        """The last part of the path."""
        return self.path.rsplit("/", 1)[-1]

    def rows(self) -> Iterator[tuple[str, Node, int]]:
        """The nodes below this one depth first, as the template draws them.

        Yields ``("open", folder, depth)`` before a folder's children and
        ``("close", folder, depth)`` after them, and ``("file", file, depth)``;
        ``depth`` is 0 for this node's own children. Walked with a stack, so a tree
        of any depth is drawn without recursion.
        """
        stack: list[tuple[Node, int, bool]] = [(c, 0, False) for c in reversed(self.children)]
        while stack:
            node, depth, done = stack.pop()
            if not node.is_dir:
                yield "file", node, depth
            elif done:
                yield "close", node, depth
            else:
                yield "open", node, depth
                stack.append((node, depth, True))
                stack += [(c, depth + 1, False) for c in reversed(node.children)]

    def walk(self) -> list[Node]:
        """This node and every node below it, each folder before its children."""
        found: list[Node] = []
        stack = [self]
        while stack:
            node = stack.pop()
            found.append(node)
            stack += reversed(node.children)
        return found


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
            if child.is_dir:
                _collapse(child)
    _limit_levels(root, ENTRIES_SHOWN)
    return root, len(rows)


def _limit_levels(top: Node, budget: int) -> None:
    """Draw whole levels below ``top`` while they fit in ``budget`` entries.

    The folders of the last level that fits keep their counts and an open link, and
    lose their children; when even the first level does not fit, it is cut at
    ``budget`` and :attr:`Node.left_out` says how many entries are missing.
    """
    if len(top.children) > budget:
        top.left_out = len(top.children) - budget
        top.children = top.children[:budget]
    level, drawn = top.children, len(top.children)
    while level:
        below = [c for node in level for c in node.children]
        if drawn + len(below) <= budget:
            level, drawn = below, drawn + len(below)
            continue
        for node in level:
            if node.children:
                node.children = []
                node.collapsed = True
        return


def _collapse(top: Node) -> None:
    """Leave only the folders below each folder of ``top`` (its files open on their own page)."""
    for node in top.walk():
        if node.is_dir:
            kept = [c for c in node.children if c.is_dir]
            node.collapsed = len(kept) < len(node.children)
            node.children = kept


def _add_headings(state: StoreState, node: Node) -> None:
    for child in node.walk():
        if not child.is_dir:
            child.headings = state.outline(child.path)[1]


def _order(top: Node) -> int:
    """Sort every folder's children (folders first) and sum their files and sizes."""
    folders = [n for n in top.walk() if n.is_dir]
    for node in reversed(folders):  # children before their parents
        node.children.sort(key=lambda n: (not n.is_dir, n.name))
        node.files = sum(c.files if c.is_dir else 1 for c in node.children)
        node.size = sum(c.size for c in node.children)
    return top.files
