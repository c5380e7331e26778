"""grep's text cache: every change made before a search is seen by it, memory stays bounded."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from memdir.store import Store
from memdir.tools._grep import grep_store
from memdir.tools._textcache import TextCache, cache_for


def _md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\n{body}\n"


def _fill(store: Store) -> None:
    for i in range(30):
        store.write(f"/memories/f{i % 3}/n{i}.md", _md(f"n{i}", f"line with word{i}"))


def _hits(store: Store, pattern: str, path: str = "/memories") -> list[tuple[str, int, str]]:
    return [(h.path, h.line, h.text) for h in grep_store(store, pattern, path)]


def _walked(store: Store, pattern: str) -> list[tuple[str, int, str]]:
    """The same search without the cache: every file read now."""
    import re

    out = []
    for node in sorted((n for n in store.tree() if n.kind == "memory"), key=lambda n: n.virtual):
        text = store.read(node.virtual)
        for number, line in enumerate(text.split("\n"), start=1):
            if re.search(pattern, line):
                out.append((node.virtual, number, line))
    return out


def test_every_kind_of_change_is_seen_by_the_next_search(store: Store) -> None:
    _fill(store)
    assert _hits(store, "word7") == _walked(store, "word7")
    root = store.root
    # In place, same size, modification time put back.
    host = root / "f1" / "n7.md"
    before = host.stat()
    data = host.read_bytes()
    with open(host, "r+b") as handle:
        handle.write(data.replace(b"word7", b"WORD7"))
    os.utime(host, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _hits(store, "word7") == [] and len(_hits(store, "WORD7")) == 1
    # A folder moved, a file removed, a file made by another tool.
    shutil.move(root / "f2", root / "g")
    (root / "f0" / "n3.md").unlink()
    (root / "g" / "new.md").write_text(_md("new", "word3 again"))
    for pattern in ("word3", "word5", "line with"):
        assert _hits(store, pattern) == _walked(store, pattern)
    assert _hits(store, "word", "/memories/g") == [
        h for h in _walked(store, "word") if h[0].startswith("/memories/g/")]


def test_a_second_search_reads_no_file(store: Store) -> None:
    _fill(store)
    cache = cache_for(store)
    _hits(store, "word1")
    reads = cache.reads
    _hits(store, "word2")
    if cache.live:
        assert cache.reads == reads
    store.write("/memories/f0/n0.md", _md("n0", "changed"))
    _hits(store, "changed")
    if cache.live:
        assert cache.reads == reads + 1


def test_files_past_the_limit_are_read_each_time_and_still_found(store: Store) -> None:
    _fill(store)
    cache = TextCache(store, limit=200)
    try:
        first = cache.files()
        walked = sorted(n.virtual for n in store.tree() if n.kind == "memory")
        assert [v for v, _ in first] == walked
        assert all(data is not None for _, data in first)
        reads = cache.reads
        again = cache.files()
        assert again == first
        assert cache.reads - reads >= 25  # most files are over the 200 bytes held
        assert cache._held <= 200
    finally:
        cache.close()


def test_a_store_deeper_than_a_path_can_be_is_searched(
    tmp_path: Path, deep_tree: Callable[..., str]
) -> None:
    store = Store(tmp_path / "s", create=True)
    deep_tree(store.root, 600, "x.md", _md("x", "deep needle"), folder="dddddddd")
    hits = _hits(store, "needle")
    assert len(hits) == 1 and hits[0][0].count("/") == 602
