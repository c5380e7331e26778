"""The incremental index answers exactly as an index built from scratch, after any changes.

Random sequences of changes (memdir writes, deletes and folder moves, and edits made
behind memdir's back, in place) are applied to a store; after each one the index kept
in step through the change feed, with compaction forced often, must rank every query
as a fresh index over the same files does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.store import Store
from memdir.tools._bm25index import FileIndex

WORDS = ["apple", "banana", "cherry", "delta", "echo", "fig", "grape", "hotel", "igloo"]
FOLDERS = ["", "a", "a/b", "c"]
NAMES = [f"n{i}" for i in range(6)]
QUERIES = [["apple"], ["banana", "cherry"], ["delta", "fig", "igloo"], ["grape", "hotel"]]


def _text(name: str, words: list[str]) -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\n{' '.join(words)}\n"


_file = st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES))
_body = st.lists(st.sampled_from(WORDS), max_size=12)
_step = st.one_of(
    st.tuples(st.just("write"), _file, _body),
    st.tuples(st.just("outside"), _file, _body),
    st.tuples(st.just("delete"), _file, st.just([])),
    st.tuples(st.just("move"), st.tuples(st.sampled_from(FOLDERS[1:]),
                                         st.sampled_from(["x", "y"])), st.just([])),
)


def _apply(store: Store, step: tuple[str, tuple[str, str], list[str]]) -> None:
    kind, (folder, name), words = step
    virtual = "/memories/" + "/".join(p for p in (folder, f"{name}.md") if p)
    host = store.root.joinpath(*virtual.split("/")[2:])
    if kind == "write":
        store.write(virtual, _text(name, words))
    elif kind == "outside":
        if host.is_file():
            # In place, the same inode, the modification time put back.
            before = host.stat()
            with open(host, "r+b") as handle:
                handle.truncate(0)
                handle.write(_text(name, words).encode())
            os.utime(host, ns=(before.st_atime_ns, before.st_mtime_ns))
        else:
            host.parent.mkdir(parents=True, exist_ok=True)
            host.write_text(_text(name, words), encoding="utf-8")
    elif kind == "delete":
        if host.is_file():
            host.unlink()
    else:  # move a whole folder to a new name (or back)
        source = store.root / folder
        target = store.root / name
        if source.is_dir() and not target.exists():
            shutil.move(source, target)


def _ranking(index: FileIndex, query: list[str], under: str) -> list[tuple[str, float]]:
    return [(h.path, h.score) for h in index.search(query, 50, under)]


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_step, min_size=1, max_size=25))
def test_the_kept_index_ranks_as_a_fresh_one(tmp_path: Path, steps: list) -> None:  # type: ignore[type-arg]
    root = tmp_path / f"s{len(os.listdir(tmp_path))}"
    store = Store(root, create=True)
    kept = FileIndex(store, compact_min=3)
    kept.refresh()
    try:
        for step in steps:
            _apply(store, step)
            kept.refresh()
            fresh = FileIndex(store, feed=False)
            fresh.refresh()
            assert kept.paths == fresh.paths
            for query in QUERIES:
                for under in ("/memories", "/memories/a", "/memories/x"):
                    got, want = _ranking(kept, query, under), _ranking(fresh, query, under)
                    assert [p for p, _ in got] == [p for p, _ in want]
                    assert np.allclose([s for _, s in got], [s for _, s in want])
        assert kept.live
    finally:
        kept.close()


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(text=st.text())
def test_the_word_pattern_finds_what_bm25s_finds(text: str) -> None:
    import re

    from memdir.tools._bm25terms import _WORD

    assert _WORD.findall(text) == re.findall(r"(?u)\b\w\w+\b", text)


def test_the_fast_walk_finds_the_memory_files_of_the_full_walk(store: Store) -> None:
    from memdir.store._paths import open_root
    from memdir.store._tree import memory_files

    root = store.root
    for virtual in ("/memories/a.md", "/memories/x/b.md", "/memories/x/y/c.md"):
        store.write(virtual, _text(virtual.rsplit("/", 1)[-1][:-3], ["apple"]))
    (root / "x" / "notes.txt").write_text("not memory")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "d.md").write_text("hidden")
    (root / "x" / "link.md").symlink_to(root / "a.md")
    (root / "x" / ".tmp-1.part").write_text("temporary")
    (root / "x" / "fifo.md").touch()
    os.unlink(root / "x" / "fifo.md")
    os.mkfifo(root / "x" / "fifo.md")
    (root / "folder.md").mkdir()  # a folder named like a file is walked as a folder
    store.write("/memories/folder.md/e.md", _text("e", ["apple"]))
    os.close(os.open(os.fsencode(root) + b"/x/bad\xff.md", os.O_CREAT | os.O_WRONLY))
    fd = open_root(root)
    try:
        fast = sorted(p for p, _ in memory_files(fd))
    finally:
        os.close(fd)
    assert fast == sorted(n.virtual for n in store.tree() if n.kind == "memory")
    assert fast == ["/memories/a.md", "/memories/folder.md/e.md", "/memories/x/b.md",
                    "/memories/x/y/c.md"]
