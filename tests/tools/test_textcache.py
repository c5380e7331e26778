"""grep's text cache: every change made before a search is seen by it, memory stays bounded."""

from __future__ import annotations

import os
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from memdir.store import Store
from memdir.tools._grep import grep_store
from memdir.tools._textcache import TextCache, cache_for, read_once


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


def _awkward_tree(store: Store, outside: Path) -> None:
    """Files and folders whose names sort around each other, and entries no walk may read."""
    for path in ["/memories/a.md", "/memories/a/x.md", "/memories/a-b/y.md",
                 "/memories/a/y/z.md", "/memories/a/y.md", "/memories/a b/c.md",
                 "/memories/b/deep/er/e.md", "/memories/z.md"]:
        store.write(path, _md(path.rsplit("/", 1)[1][:-3], f"needle {path}"))
    root = store.root
    outside.write_text("needle outside the store\n")
    (root / "link.md").symlink_to(outside)  # a link to a file outside: refused
    (root / "linked").symlink_to(root / "a", target_is_directory=True)  # never entered
    os.mkfifo(root / "b" / "pipe.md")  # not a regular file: never opened
    (root / "notes.txt").write_text("needle, but not a memory file\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.md").write_text(_md("h", "needle hidden"))
    (root / "b" / ".h.md").write_text(_md("h", "needle hidden file"))
    (root / "big.md").write_bytes(b"x" * (3 << 20) + b"\nneedle at the end\n")


def test_read_once_gives_what_the_cache_gives_and_keeps_nothing(
    store: Store, tmp_path: Path
) -> None:
    _awkward_tree(store, tmp_path / "outside.md")
    cache = TextCache(store)
    try:
        for under in ("/memories", "/memories/a", "/memories/b", "/memories/a b",
                      "/memories/b/deep"):
            once = list(read_once(store, under))
            assert once == cache.files(under), under
            assert once and all(data is not None for _, data in once)
        assert cache.reads == 9  # the nine memory files, read once by the cache
    finally:
        cache.close()
    paths = [virtual for virtual, _ in read_once(store)]
    assert paths == sorted(n.virtual for n in store.tree() if n.kind == "memory")
    assert "/memories/big.md" in paths and "/memories/link.md" not in paths
    assert not any("hidden" in p or "pipe" in p or "linked" in p for p in paths)
    assert list(read_once(store, "/memories/.hidden")) == []


def test_a_search_without_the_cache_finds_the_same_lines(store: Store, tmp_path: Path) -> None:
    _awkward_tree(store, tmp_path / "outside.md")
    for pattern in ("needle", "NEEDLE", "needle (/memories/a|outside)", "^name: [az]$"):
        cached = list(grep_store(store, pattern, ignore_case=pattern.isupper()))
        once = list(grep_store(store, pattern, ignore_case=pattern.isupper(), cache=False))
        assert once == cached and once, pattern
    assert [h.path for h in grep_store(store, "needle at the end", cache=False)] == [
        "/memories/big.md"]


def test_read_once_reopens_folders_above_the_handles_it_keeps(
    tmp_path: Path, deep_tree: Callable[..., str]
) -> None:
    store = Store(tmp_path / "s", create=True)
    deep = deep_tree(store.root, 80, "x.md", _md("x", "deep needle"), folder="d")
    # A file after the deep folder at every level: reached once the walk comes back up,
    # through folders whose handles it let go on the way down.
    fd = os.open(store.root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(80):
            out = os.open("z.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
            os.write(out, _md("z", "needle after").encode())
            os.close(out)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    paths = [virtual for virtual, data in read_once(store) if data is not None]
    assert len(paths) == 81 and paths[-1] == "/memories/z.md"
    assert paths[0] == deep and paths == sorted(paths)
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before  # every handle closed


def test_a_search_without_the_cache_holds_one_batch_not_the_store(store: Store) -> None:
    # Over 20 MiB of files against batches of at most 4 MiB: the search may not hold them all.
    body = ("filler words " * 20 + "\n") * 1000  # about 260 KB a file
    for i in range(96):
        store.write(f"/memories/f{i % 4}/n{i}.md", _md(f"n{i}", body + f"word{i}"))
    total = sum(len(data or b"") for _, data in read_once(store))
    assert total > 20 << 20
    tracemalloc.start()
    try:
        hits = list(grep_store(store, "word7", cache=False))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted(h.text for h in hits) == ["word7", *(f"word{i}" for i in range(70, 80))]
    assert [h.path for h in hits] == sorted(h.path for h in hits)
    assert peak < 8 << 20, peak
