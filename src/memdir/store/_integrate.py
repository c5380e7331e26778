"""Bringing another replica's commit into a store: the merge in memory, then the files.

The merge is ``git merge-tree --write-tree``: git's own merge (rename detection,
tree-level decisions: an edit against a delete keeps the edit, two renames of one
file keep both) computed into objects without touching the store. Each file both
sides changed is then merged by :func:`memdir.store._merge.merge_bytes`, the
function memdir's merge driver runs, here called in this process (the driver is
switched off for this one command), so a sync does not start a Python process per
file; a person's plain ``git merge`` in the store runs the same function as the
driver git calls.

Writing the result changes only the files that differ, each atomically through
the store's folder handles; every file about to be replaced or removed is first
checked to still hold what the snapshot recorded.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from memdir.store._conflicts import find_blocks, has_conflict
from memdir.store._merge import Labels, merge_bytes
from memdir.store._paths import ROOT, lstat_at, open_dir, open_root, read_at, remove_at, write_at
from memdir.store._store import STATE_DIR
from memdir.store.history import History, HistoryError, _blob_id

__all__ = ["EMPTY_TREE", "Applied", "MovedError", "apply_trees", "merge_commits",
           "new_conflicts"]

EMPTY_TREE: Final = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_FILE_MODES: Final = frozenset({"100644", "100755"})
_TREE_ID: Final = re.compile(r"[0-9a-f]{40,64}")


class MovedError(Exception):
    """A file to be replaced changed since the snapshot (written without the store's lock)."""


@dataclass
class Applied:
    """The store files a change wrote or removed, and the bytes written."""

    paths: list[str] = field(default_factory=list)
    written: dict[str, bytes] = field(default_factory=dict)


def merge_commits(history: History, head: str, remote: str,
                  labels: Labels) -> tuple[str, list[str]]:
    """The merged tree of two commits, and the files one side edited and the other dropped.

    Raises:
        HistoryError: git could not merge (too old for ``merge-tree --write-tree``).
    """
    # The driver's temporary files land in the work tree: a scratch one, never the store.
    with tempfile.TemporaryDirectory(prefix="memdir-merge-") as scratch:
        raw = history._git("-c", "merge.memdir.driver=false", "merge-tree", "--write-tree",
                           "-z", "--allow-unrelated-histories", head, remote,
                           env={"GIT_WORK_TREE": scratch}, cwd=Path(scratch),
                           check=False)
    parts = raw.split(b"\0")
    tree = parts[0].decode().strip()
    if not _TREE_ID.fullmatch(tree):
        raise HistoryError(f"git merge-tree gave no tree for {head[:10]} and {remote[:10]} "
                           f"(git 2.38 or later is needed): {raw[:300]!r}")
    stages: dict[str, dict[int, str]] = {}
    for entry in parts[1:]:
        if not entry:
            break
        meta, _, path = entry.decode("utf-8", "surrogateescape").partition("\t")
        _mode, blob, stage = meta.split()
        stages.setdefault(path, {})[int(stage)] = blob
    return _settle(history, tree, stages, labels)


def _settle(history: History, tree: str, stages: dict[str, dict[int, str]],
            labels: Labels) -> tuple[str, list[str]]:
    """Merge each path both sides changed; the tree already keeps one-sided edits."""
    kept: list[str] = []
    both = {p: s for p, s in stages.items() if 2 in s and 3 in s}
    kept = [f"{ROOT}/{p}" for p in sorted(stages) if p not in both]
    if not both:
        return tree, kept
    data = history.read_blobs({b for s in both.values() for b in s.values()})
    merged = {path: merge_bytes(data[s[1]] if 1 in s else None, data[s[2]], data[s[3]], path,
                                labels).data for path, s in both.items()}
    blobs = _write_blobs(history, list(merged.values()))
    with tempfile.TemporaryDirectory(prefix="memdir-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        history._git("read-tree", tree, env=env)
        info = "".join(f"100644 {blob}\t{path}\0" for path, blob in zip(merged, blobs,
                                                                          strict=True))
        history._git("update-index", "-z", "--add", "--index-info",
                     input=info.encode("utf-8", "surrogateescape"), env=env)
        tree = history._git("write-tree", env=env).decode().strip()
    return tree, kept


def _write_blobs(history: History, contents: list[bytes]) -> list[str]:
    """Store several blobs with one git process; their ids in order."""
    with tempfile.TemporaryDirectory(prefix="memdir-blobs-") as scratch:
        names = []
        for n, data in enumerate(contents):
            file = Path(scratch) / str(n)
            file.write_bytes(data)
            names.append(str(file))
        out = history._git("hash-object", "-w", "--stdin-paths",
                           input=("\n".join(names) + "\n").encode())
    return out.decode().split()


def apply_trees(history: History, old_tree: str, new_tree: str) -> Applied:
    """Make the store's files go from ``old_tree`` to ``new_tree`` (the caller holds the lock).

    Raises:
        MovedError: A file to be replaced or removed no longer holds what
            ``old_tree`` has (nothing was written then).
        OSError: A file could not be written.
    """
    raw = history._git("diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree)
    fields = raw.split(b"\0")
    changes: list[tuple[str, str, str, str, str]] = []  # status, mode, old, new, path
    for meta, name in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        _old_mode, new_mode, old_blob, new_blob, status = meta[1:].decode().split()
        changes.append((status[0], new_mode, old_blob, new_blob,
                        name.decode("utf-8", "surrogateescape")))
    wanted = [new for status, mode, _, new, _ in changes if status != "D" and mode in _FILE_MODES]
    contents = history.read_blobs(wanted)
    applied = Applied()
    root_fd = open_root(history.root)
    try:
        for status, _mode, old_blob, _new, path in changes:
            _check_unchanged(root_fd, path, None if status == "A" else old_blob)
        for status, mode, _old, new_blob, path in changes:
            parts = tuple(path.split("/"))
            if parts[0] in (STATE_DIR, ".git"):
                continue
            virtual = f"{ROOT}/{path}"
            if status == "D" or mode not in _FILE_MODES:
                _remove(root_fd, parts)  # links and submodules never enter a store
            else:
                folder = open_dir(root_fd, parts[:-1], create=True)
                try:
                    write_at(folder, parts[-1], contents[new_blob])
                finally:
                    os.close(folder)
                applied.written[virtual] = contents[new_blob]
            applied.paths.append(virtual)
    finally:
        os.close(root_fd)
    return applied


def _check_unchanged(root_fd: int, path: str, blob: str | None) -> None:
    parts = tuple(path.split("/"))
    try:
        folder = open_dir(root_fd, parts[:-1])
    except (FileNotFoundError, NotADirectoryError):
        current = None
    else:
        try:
            st = lstat_at(folder, parts[-1])
            current = None if st is None else _blob_id(read_at(folder, parts[-1]))
        except OSError:
            current = "?"
        finally:
            os.close(folder)
    if current != blob:
        raise MovedError(f"{ROOT}/{path}")


def _remove(root_fd: int, parts: tuple[str, ...]) -> None:
    """Remove a file if present, then every folder it leaves empty."""
    try:
        folder = open_dir(root_fd, parts[:-1])
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        if lstat_at(folder, parts[-1]) is not None:
            remove_at(folder, parts[-1])
    finally:
        os.close(folder)
    for depth in range(len(parts) - 1, 0, -1):
        try:
            parent = open_dir(root_fd, parts[: depth - 1])
        except OSError:
            return
        try:
            os.rmdir(parts[depth - 1], dir_fd=parent)
        except OSError:
            return
        finally:
            os.close(parent)


def new_conflicts(history: History, head: str, remote: str,
                  written: Mapping[str, bytes]) -> list[str]:
    """The written files whose text holds a conflict block that neither side had."""
    found: list[str] = []
    for virtual, data in written.items():
        text = data.decode("utf-8", "replace")
        if not has_conflict(text):
            continue
        path = virtual[len(ROOT) + 1 :]
        before: set[str] = set()
        for side in (head, remote):
            out = history._git("cat-file", "blob", f"{side}:{path}", check=False)
            before |= {b.id for b in find_blocks(out.decode("utf-8", "replace"))}
        if {b.id for b in find_blocks(text)} - before:
            found.append(virtual)
    return found
