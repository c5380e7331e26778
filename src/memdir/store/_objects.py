"""git objects written by memdir itself: the blobs, trees and commit of a merge, no git process.

A merge's result sits between a fetch and a push, where every git process started
widens the window in which another replica's push makes this one's lose the race.
The few objects a merge makes (a blob per file merged line by line, the trees on
their paths, one commit) are written here as git writes a loose object: the
type, size and bytes hashed with SHA-1, compressed with zlib, placed under
``.git/objects`` by a hard link from a temporary file (so an object that exists
is never overwritten, and none is ever seen half-written), read-only. Trees are
rebuilt from the ones git already has (read in the same ``git cat-file --batch``
as the merge's blobs), with only the merged entries replaced.

Only for repositories of SHA-1 objects (git's default); the caller keeps git's
own way for a SHA-256 repository.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

__all__ = ["TreeEntries", "commit_object", "parse_tree", "read_loose", "read_spec",
           "rebuild_tree", "tree_object", "write_object"]

TreeEntries = dict[bytes, tuple[bytes, bytes]]
"""A tree's entries: name -> (mode as git writes it, e.g. ``b"100644"``, binary object id)."""

_TREE_MODE: Final = b"40000"
_HEX: Final = frozenset("0123456789abcdef")
_KINDS: Final = frozenset({b"blob", b"tree", b"commit", b"tag"})
_MAX_LOOSE: Final = 64 * 1024 * 1024
"""Largest object read here; a bigger one is left to git (bounded memory)."""


def write_object(git_dir: Path, kind: bytes, data: bytes) -> str:
    """Store one loose object of type ``kind`` (``b"blob"``, ``b"tree"``, ``b"commit"``).

    Returns:
        Its hex object id.
    """
    raw = b"%s %d\0%s" % (kind, len(data), data)
    oid = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    folder = git_dir / "objects" / oid[:2]
    final = folder / oid[2:]
    if final.exists():
        return oid
    folder.mkdir(exist_ok=True)
    temp = folder / f"tmp_obj_memdir_{os.getpid()}_{oid[2:12]}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o444)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(zlib.compress(raw))
        with contextlib.suppress(FileExistsError):  # another process wrote it meanwhile
            os.link(temp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return oid


def read_loose(git_dir: Path, oid: str) -> tuple[str, bytes] | None:
    """A loose object's (type, bytes), checked against its id; None when it is not loose here.

    None too for anything this reader does not take on (a packed object, a
    SHA-256 id, an object too big, one whose bytes do not hash to its id): the
    caller asks git for those.
    """
    if len(oid) != 40 or not _HEX.issuperset(oid):
        return None
    try:
        with open(git_dir / "objects" / oid[:2] / oid[2:], "rb") as file:
            packed = file.read(_MAX_LOOSE + 1)
    except OSError:
        return None
    try:
        unpack = zlib.decompressobj()
        raw = unpack.decompress(packed, _MAX_LOOSE + 64)
    except zlib.error:
        return None
    if not unpack.eof or unpack.unconsumed_tail:
        return None  # cut short, or longer than the bound
    if hashlib.sha1(raw, usedforsecurity=False).hexdigest() != oid:
        return None
    head, nul, data = raw.partition(b"\0")
    kind, _, size = head.partition(b" ")
    if not nul or kind not in _KINDS or not size.isdigit() or int(size) != len(data):
        return None
    return kind.decode(), data


def read_spec(git_dir: Path, spec: str) -> tuple[str, bytes] | None:
    """An object named as ``git cat-file`` names it, ``id`` or ``id:path``, from loose objects.

    ``id`` may be a commit (its tree is followed for a path) or a tree. None when
    any object on the way is not loose, or the name is of another form; a path
    that is not there gives ``("missing", b"")``.
    """
    oid, colon, path = spec.partition(":")
    found = read_loose(git_dir, oid)
    if found is None or not colon:
        return found
    kind, data = found
    if kind == "commit":
        first = data.split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            return None
        found = read_loose(git_dir, first[5:].decode("ascii", "replace"))
        if found is None:
            return None
        kind, data = found
    for name in (path.encode("utf-8", "surrogateescape").split(b"/") if path else []):
        if not name:
            return None  # a name git would read its own way
        if kind != "tree":
            return ("missing", b"")
        entry = parse_tree(data).get(name)
        if entry is None:
            return ("missing", b"")
        found = read_loose(git_dir, entry[1].hex())
        if found is None:
            return None
        kind, data = found
    return kind, data


def parse_tree(data: bytes) -> TreeEntries:
    """A tree object's entries (the bytes ``git cat-file tree`` gives)."""
    found: TreeEntries = {}
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        found[data[space + 1 : nul]] = (data[pos:space], data[nul + 1 : nul + 21])
        pos = nul + 21
    return found


def tree_object(entries: TreeEntries) -> bytes:
    """The bytes of a tree holding ``entries``, in git's order (a folder sorts as ``name/``)."""
    order = sorted(entries, key=lambda name: name + b"/" if entries[name][0] == _TREE_MODE
                   else name)
    return b"".join(b"%s %s\0%s" % (entries[n][0], n, entries[n][1]) for n in order)


def rebuild_tree(git_dir: Path, root: str, files: Mapping[bytes, tuple[bytes, str]],
                 read_tree: Callable[[bytes], bytes | None]) -> str:
    """The tree ``root`` with each of ``files`` (path -> (mode, blob id)) set; its id.

    Args:
        git_dir: The repository's ``.git``.
        root: The tree to start from.
        files: The entries to set, by path from the top (``b"a/b.md"``).
        read_tree: A folder's tree in ``root`` by path (``b""`` for the top), or None
            when the path is not a folder there (a new folder is then made).
    """
    changed: dict[bytes, dict[bytes, tuple[bytes, bytes]]] = {}
    for path, (mode, blob) in files.items():
        folder, _, name = path.rpartition(b"/")
        changed.setdefault(folder, {})[name] = (mode, bytes.fromhex(blob))
        while folder:  # every folder on the way is rewritten, top included
            folder = folder.rpartition(b"/")[0]
            changed.setdefault(folder, {})
    made = ""
    for folder in sorted(changed, key=lambda f: (-f.count(b"/") if f else 1, f)):
        old = read_tree(folder)
        entries = parse_tree(old) if old is not None else {}
        entries.update(changed[folder])
        made = write_object(git_dir, b"tree", tree_object(entries))
        if folder:
            parent, _, name = folder.rpartition(b"/")
            changed[parent][name] = (_TREE_MODE, bytes.fromhex(made))
    return made or root


def commit_object(tree: str, parents: list[str], message: str, when: int,
                  who: bytes = b"memdir <memdir@localhost>") -> bytes:
    """A commit's bytes: ``tree``, ``parents``, ``who`` as author and committer at ``when``."""
    lines = [b"tree " + tree.encode(), *(b"parent " + p.encode() for p in parents),
             b"author %s %d +0000" % (who, when), b"committer %s %d +0000" % (who, when)]
    return b"\n".join(lines) + b"\n\n" + message.encode("utf-8")
