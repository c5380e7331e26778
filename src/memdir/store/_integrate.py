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
import stat
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from memdir.store._conflicts import find_blocks, has_conflict
from memdir.store._merge import Labels, merge_bytes
from memdir.store._paths import (
    FILE_MODE,
    ROOT,
    lstat_at,
    open_dir,
    open_root,
    read_at,
    remove_at,
    write_temp_at,
)
from memdir.store._store import STATE_DIR
from memdir.store.history import History, HistoryError, _blob_id

__all__ = ["EMPTY_TREE", "Applied", "MovedError", "apply_trees", "merge_commits",
           "new_conflicts"]

EMPTY_TREE: Final = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_FILE_MODES: Final = frozenset({"100644", "100755"})
_TREE_ID: Final = re.compile(r"[0-9a-f]{40,64}")
_BATCH: Final = 256
"""Files written per batch: bounds the folder handles held open at once."""
_UNPACK_LIMIT: Final = 1000
"""An import of fewer objects leaves them loose instead of as a pack of its own."""
_FLUSHERS: Final = 8
"""Files flushed to disk at once after a merge's files are written."""


class MovedError(Exception):
    """A file to be replaced changed since the snapshot (written without the store's lock)."""


@dataclass
class Applied:
    """The store files a change wrote or removed, and the bytes written."""

    paths: list[str] = field(default_factory=list)
    written: dict[str, bytes] = field(default_factory=dict)


def merge_commits(history: History, head: str, remote: str, labels: Labels, *,
                  message: str | None = None) -> tuple[str, list[str], str | None]:
    """The merged tree of two commits, files edited on one side and dropped on the other.

    The third item is the merge commit, when it cost nothing more to make: with
    ``message``, a merge that had files to merge line by line is recorded as a
    commit of ``head`` and ``remote`` (that message, memdir's identity) by the
    git process that stores the merged files. Otherwise it is None, and the
    caller commits the tree if it wants it.

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
    return _settle(history, tree, stages, labels, (head, remote, message))


def _settle(history: History, tree: str, stages: dict[str, dict[int, str]],
            labels: Labels, commit: tuple[str, str, str | None]
            ) -> tuple[str, list[str], str | None]:
    """Merge each path both sides changed; the tree already keeps one-sided edits."""
    kept: list[str] = []
    both = {p: s for p, s in stages.items() if 2 in s and 3 in s}
    kept = [f"{ROOT}/{p}" for p in sorted(stages) if p not in both]
    if not both:
        return tree, kept, None
    head, remote, message = commit
    # SHA-1 objects (git's default) are written here, with the trees they go in, read
    # with the blobs in one git process: no git process between the merge and the push.
    own = message is not None and len(tree) == 40 and not any("\n" in p for p in both)
    folders = sorted({"/".join(p.split("/")[:depth]) for p in both
                      for depth in range(p.count("/") + 1)}) if own else []
    blobs = sorted({b for s in both.values() for b in s.values()})
    read = _read_batch(history, [*blobs, *(f"{tree}:{f}" if f else tree for f in folders)])
    if any(read[b][0] != "blob" for b in blobs):
        raise HistoryError(f"git could not read the blobs of a merge of {head[:10]} and "
                           f"{remote[:10]}: {[b for b in blobs if read[b][0] != 'blob']}")
    data = {b: read[b][1] for b in blobs}

    def merge(path: str) -> bytes:
        s = both[path]
        return merge_bytes(data[s[1]] if 1 in s else None, data[s[2]], data[s[3]], path,
                           labels).data

    # The line merges run in this process (no git process between the fetch and the
    # push); only a file past the in-process diff's bound starts a ``git merge-file``.
    merged = {path: merge(path) for path in both}
    if own:
        assert message is not None
        made, tree = _own_merge(history, tree, merged, read, (head, remote, message))
        return tree, kept, made
    if message is not None and all(_importable(path) for path in merged):
        made, tree = _import_merge(history, tree, merged, head, remote, message)
        return tree, kept, made
    blobs = _write_blobs(history, list(merged.values()))
    with tempfile.TemporaryDirectory(prefix="memdir-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        history._git("read-tree", tree, env=env)
        info = "".join(f"100644 {blob}\t{path}\0" for path, blob in zip(merged, blobs,
                                                                          strict=True))
        history._git("update-index", "-z", "--add", "--index-info",
                     input=info.encode("utf-8", "surrogateescape"), env=env)
        tree = history._git("write-tree", env=env).decode().strip()
    return tree, kept, None


def _own_merge(history: History, tree: str, merged: Mapping[str, bytes],
               read: Mapping[str, tuple[str, bytes]], commit: tuple[str, str, str]
               ) -> tuple[str, str]:
    """Write the merged files, their trees and the merge commit as loose objects: (commit, tree).

    ``read`` holds the merge tree's folders on the merged files' paths, as
    ``tree:folder`` (the top as ``tree``), from :func:`_read_batch`.
    """
    from memdir.store._objects import commit_object, rebuild_tree, write_object

    git_dir = history.root / ".git"
    files = {path.encode("utf-8", "surrogateescape"):
             (b"100644", write_object(git_dir, b"blob", data)) for path, data in merged.items()}

    def folder(name: bytes) -> bytes | None:
        spec = f"{tree}:{name.decode('utf-8', 'surrogateescape')}" if name else tree
        kind, data = read.get(spec, ("missing", b""))
        return data if kind == "tree" else None

    made_tree = rebuild_tree(git_dir, tree, files, folder)
    head, remote, message = commit
    made = write_object(git_dir, b"commit", commit_object(made_tree, [head, remote], message,
                                                          int(time.time())))
    return made, made_tree


def _read_batch(history: History, specs: list[str]) -> dict[str, tuple[str, bytes]]:
    """Several objects by name (an id, ``tree:path``): spec -> (type, bytes).

    Loose objects are read here; the rest in one git process. A name git cannot
    find gives ``("missing", b"")``. No name may hold a newline.
    """
    from memdir.store._objects import read_spec

    found: dict[str, tuple[str, bytes]] = {}
    wanted = []
    for spec in dict.fromkeys(specs):  # loose objects (new ones, mostly) need no git process
        loose = read_spec(history.root / ".git", spec)
        if loose is None:
            wanted.append(spec)
        else:
            found[spec] = loose
    if not wanted:
        return found
    out = history._git("cat-file", "--batch",
                       input="".join(f"{s}\n" for s in wanted).encode("utf-8", "surrogateescape"))
    pos = 0
    for spec in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if len(header) < 3 or header[-1] == b"missing":
            found[spec], pos = ("missing", b""), end + 1
            continue
        size = int(header[2])
        found[spec] = (header[1].decode(), out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return found


def _importable(path: str) -> bool:
    """Whether ``git fast-import`` reads ``path`` as written (no quoting needed)."""
    return "\n" not in path and not path.startswith('"')


def _import_merge(history: History, tree: str, merged: Mapping[str, bytes], head: str,
                  remote: str, message: str) -> tuple[str, str]:
    """Store the merged files and the merge commit in one ``git fast-import``: (commit, tree).

    The commit is ``tree`` with ``merged`` files in it, parents ``head`` and
    ``remote``; no ref is left behind (the import's branch is reset at the end),
    and a small import's objects stay loose, as ``git commit`` leaves them.
    """
    text = message.encode("utf-8")
    stream = bytearray(
        b"commit refs/memdir/merge\nmark :1\n"
        b"committer memdir <memdir@localhost> %d +0000\n"
        b"data %d\n%s\nfrom %s\nmerge %s\nM 040000 %s \"\"\n"
        % (int(time.time()), len(text), text, head.encode(), remote.encode(), tree.encode()))
    for path, data in merged.items():
        stream += b"M 100644 inline %s\ndata %d\n%s\n" % (
            path.encode("utf-8", "surrogateescape"), len(data), data)
    stream += b"\nget-mark :1\nls :1 \"\"\nreset refs/memdir/merge\n\n"
    out = history._git("-c", f"fastimport.unpackLimit={_UNPACK_LIMIT}", "fast-import",
                       "--quiet", input=bytes(stream)).decode().split("\n")
    made, listed = out[0].strip(), out[1].split()
    if not _TREE_ID.fullmatch(made) or len(listed) < 3 or not _TREE_ID.fullmatch(listed[2]):
        raise HistoryError(f"git fast-import gave no merge commit: {out[:2]!r}")
    return made, listed[2]


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
    contents = _read_blobs(history, wanted)
    applied = Applied()
    root_fd = open_root(history.root)
    try:
        for status, _mode, old_blob, _new, path in changes:
            _check_unchanged(root_fd, path, None if status == "A" else old_blob)
        writes: list[tuple[tuple[str, ...], bytes]] = []
        # Removals first, so a file may give way to a folder of its name and back.
        for status, mode, _old, new_blob, path in changes:
            parts = tuple(path.split("/"))
            if parts[0] in (STATE_DIR, ".git"):
                continue
            virtual = f"{ROOT}/{path}"
            if status == "D" or mode not in _FILE_MODES:
                _remove(root_fd, parts)  # links and submodules never enter a store
            else:
                writes.append((parts, contents[new_blob]))
                applied.written[virtual] = contents[new_blob]
            applied.paths.append(virtual)
        for start in range(0, len(writes), _BATCH):
            _write_batch(root_fd, writes[start : start + _BATCH])
    finally:
        os.close(root_fd)
    return applied


def _read_blobs(history: History, blobs: list[str]) -> dict[str, bytes]:
    """Several blobs' bytes: loose ones read here, the rest by git in one process."""
    from memdir.store._objects import read_loose

    found: dict[str, bytes] = {}
    rest = []
    for blob in set(blobs):
        loose = read_loose(history.root / ".git", blob)
        if loose is not None and loose[0] == "blob":
            found[blob] = loose[1]
        else:
            rest.append(blob)
    found.update(history.read_blobs(rest))
    return found


def _write_batch(root_fd: int, writes: list[tuple[tuple[str, ...], bytes]]) -> None:
    """Replace several files atomically, each as :func:`write_at` does, syncing each folder once.

    Every file's bytes go to a flushed temporary file beside it, then each takes
    its name in one rename, then each folder is synced: the same guarantees as one
    :func:`write_at` per file, with one folder sync per folder instead of per file.
    """
    folders: dict[tuple[str, ...], int] = {}
    temps: list[tuple[int, str, str]] = []  # folder handle, temporary name, name
    try:
        for parts, data in writes:
            where = parts[:-1]
            if where not in folders:
                folders[where] = open_dir(root_fd, where, create=True)
            folder = folders[where]
            old = lstat_at(folder, parts[-1])
            mode = old.st_mode & 0o777 if old is not None and stat.S_ISREG(old.st_mode) \
                else FILE_MODE
            temps.append((folder, write_temp_at(folder, data, mode, sync=False), parts[-1]))
        # Every temporary file reaches the disk before any takes its name; flushed a
        # few at once, so the file system commits them together instead of one by one.
        _flush_all([(folder, tmp) for folder, tmp, _name in temps])
        while temps:
            folder, tmp, name = temps[0]
            os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
            temps.pop(0)
        with ThreadPoolExecutor(max_workers=_FLUSHERS) as pool:
            list(pool.map(os.fsync, folders.values()))
    finally:
        for folder, tmp, _name in temps:  # left over after a failure: never in the store
            try:
                os.unlink(tmp, dir_fd=folder)
            except OSError:
                pass
        for folder in folders.values():
            os.close(folder)


def _flush_all(files: list[tuple[int, str]]) -> None:
    """``fsync`` each ``(folder handle, name)``, several at once."""

    def flush(item: tuple[int, str]) -> None:
        fd = os.open(item[1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=item[0])
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    if len(files) == 1:
        flush(files[0])
    elif files:
        with ThreadPoolExecutor(max_workers=_FLUSHERS) as pool:
            list(pool.map(flush, files))


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
    held = {v: d.decode("utf-8", "replace") for v, d in written.items()}
    held = {v: text for v, text in held.items() if has_conflict(text)}
    if not held:
        return []
    specs = [f"{side}:{v[len(ROOT) + 1 :]}" for v in held for side in (head, remote)]
    before = _read_objects(history, specs)
    found: list[str] = []
    for virtual, text in held.items():
        path = virtual[len(ROOT) + 1 :]
        had = {b.id for side in (head, remote)
               for b in find_blocks(before[f"{side}:{path}"].decode("utf-8", "replace"))}
        if {b.id for b in find_blocks(text)} - had:
            found.append(virtual)
    return found


def _read_objects(history: History, specs: list[str]) -> dict[str, bytes]:
    """The contents of several ``commit:path`` objects in one git process (b"" when absent)."""
    wanted = list(dict.fromkeys(specs))
    if any("\n" in spec for spec in wanted):  # the batch is read line by line
        return {spec: history._git("cat-file", "blob", spec, check=False) for spec in wanted}
    return {spec: data if kind == "blob" else b""
            for spec, (kind, data) in _read_batch(history, wanted).items()}
