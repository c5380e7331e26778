"""The BM25 term counts saved beside a store: reused after a restart, refreshed when
stale, ignored when damaged, whole under concurrent readers, never visible to agents."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path

import numpy as np
import pytest
from bm25_store import (
    QUERY,
    edit_in_place_keeping_size_and_mtime,
    filled_store,
    note,
    saved_index,
)

from memdir.store import Store
from memdir.tools import make_toolset
from memdir.tools._bm25index import FileIndex, Hit, index_for


@pytest.fixture
def filled(tmp_path: Path) -> Store:
    return filled_store(tmp_path / "s")


def _first_search(store: Store) -> tuple[FileIndex, list[Hit]]:
    """What a new process sees: a new index object, one refresh, one search."""
    index = FileIndex(store, saved=saved_index(store))
    index.refresh()
    return index, index.search(QUERY, 5)


def test_a_restart_reuses_the_saved_counts_and_ranks_the_same(filled: Store) -> None:
    first, hits = _first_search(filled)
    assert first.tokenized == 42 and saved_index(filled).is_file()
    again, same = _first_search(filled)
    assert again.tokenized == 0
    assert same == hits and {h.path for h in hits} == {"/memories/alice.md", "/memories/bob.md"}
    assert same == _memory_only(filled)


def _memory_only(store: Store) -> list[Hit]:
    index = FileIndex(store)
    index.refresh()
    return index.search(QUERY, 5)


def test_files_changed_since_the_save_are_read_again(filled: Store) -> None:
    _first_search(filled)
    filled.write("/memories/bob.md", note("bob", "Plays the tuba now."))
    filled.write("/memories/carol.md", note("carol", "Teaches the trombone."))
    filled.delete("/memories/alice.md")
    index, hits = _first_search(filled)
    assert index.tokenized == 2
    assert [h.path for h in hits] == ["/memories/carol.md"]
    assert hits == _memory_only(filled)



@pytest.mark.parametrize("restart", [False, True])
def test_an_edit_in_place_with_size_and_mtime_put_back_is_seen(filled: Store,
                                                               restart: bool) -> None:
    # Issue 19, item 10: the index keyed files on inode, mtime and size only, so both
    # the running index and a new process's saved counts kept the old words. (The
    # crafted-file tests of the old zip format went with it: see the .bin ones below.)
    index = FileIndex(filled, saved=saved_index(filled))
    index.refresh()
    index.search(QUERY, 5)
    edit_in_place_keeping_size_and_mtime(filled.root / "bob.md", b"trombone", b"zucchini")
    if restart:
        index = FileIndex(filled, saved=saved_index(filled))
    index.refresh()
    assert [h.path for h in index.search("zucchini", 5)] == ["/memories/bob.md"]
    assert index.search("trombone", 5) == []


def test_a_listing_shows_a_description_edited_in_place(filled: Store) -> None:
    def description() -> str | None:
        return next(e.description for e in filled.walk() if e.path == "/memories/bob.md")

    assert description() == "Notes on bob"
    edit_in_place_keeping_size_and_mtime(filled.root / "bob.md", b"Notes on bob",
                                           b"Tales of bob")
    assert description() == "Tales of bob"


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_file_is_ignored_with_a_warning_and_replaced(
    filled: Store, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    _first_search(filled)
    path = saved_index(filled)
    data = path.read_bytes()
    path.write_bytes({"garbage": b"not an index at all", "truncated": data[: len(data) // 2],
                      "empty": b""}[damage])
    with caplog.at_level(logging.WARNING, logger="memdir.tools._bm25index"):
        index, hits = _first_search(filled)
    assert index.tokenized == 42 and hits == _memory_only(filled)
    assert any("ignoring the saved search index" in r.getMessage() for r in caplog.records)
    assert FileIndex(filled, saved=path).refresh() and _first_search(filled)[0].tokenized == 0


def test_readers_never_see_a_half_written_file(
    filled: Store, caplog: pytest.LogCaptureFixture
) -> None:
    writer, _ = _first_search(filled)
    stop = threading.Event()
    loads: list[int] = []

    def rewrite() -> None:
        while not stop.is_set():
            writer._save(saved_index(filled))

    thread = threading.Thread(target=rewrite)
    with caplog.at_level(logging.WARNING, logger="memdir.tools._bm25index"):
        thread.start()
        try:
            for _ in range(30):
                loads.append(_first_search(filled)[0].tokenized)
        finally:
            stop.set()
            thread.join()
    assert loads == [0] * 30
    assert not [r for r in caplog.records if "ignoring" in r.getMessage()]


def test_the_saved_index_is_invisible_to_the_tools(filled: Store) -> None:
    index_for(filled).refresh()
    assert saved_index(filled).is_file()
    tools = make_toolset("bm25", filled)
    listing = asyncio.run(tools.call("view", {"path": "/memories"})).content
    found = asyncio.run(tools.call("grep", {"pattern": "bm25|npz"})).content
    assert ".memdir" not in listing and "bm25" not in listing
    assert "bm25-index" not in found and ".memdir" not in found


def _crafted(store: Store, how: str) -> None:
    """Replace the saved index with one an attacker made from it."""


    from memdir.tools._bm25file import Saved, read_saved, write_saved
    from memdir.tools._bm25matrix import Segment

    path = saved_index(store)
    good = read_saved(path, FileIndex(store).tokenizer.stemmer)
    assert good is not None
    seg = good.segment
    if how == "slots out of range":
        slots = seg.slots + 10**6  # every posting, so any query meets one
        write_saved(path, Saved(**{**_fields(good), "segment": Segment(seg.indptr, slots, seg.tf)}))
    elif how == "offsets out of order":
        indptr = seg.indptr.copy()
        indptr[1], indptr[2] = indptr[2] + 5, indptr[1]
        write_saved(path, Saved(**{**_fields(good), "segment": Segment(indptr, seg.slots, seg.tf)}))
    elif how == "zero counts":
        tf = np.zeros_like(seg.tf)
        write_saved(path, Saved(**{**_fields(good), "segment": Segment(seg.indptr, seg.slots, tf)}))
    else:
        data = bytearray(path.read_bytes())
        magic_end = data.index(b"\n") + 1
        size = int.from_bytes(data[magic_end:magic_end + 8], "little")
        header = json.loads(data[magic_end + 8:magic_end + 8 + size])
        if how == "arrays past the end":
            header["arrays"]["slots"][1] = 10**12
        elif how == "huge header":
            data[magic_end:magic_end + 8] = (10**15).to_bytes(8, "little")
            path.write_bytes(bytes(data))
            return
        elif how == "wrong dtype":
            header["arrays"]["slots"][0] = "<f8"
        raw = json.dumps(header).encode()
        raw = raw + b" " * (size - len(raw)) if len(raw) <= size else raw
        data[magic_end + 8:magic_end + 8 + size] = raw[:size]
        path.write_bytes(bytes(data))


def _fields(saved: object) -> dict[str, object]:
    from dataclasses import fields

    return {f.name: getattr(saved, f.name) for f in fields(saved)}  # type: ignore[arg-type]


@pytest.mark.parametrize("how", ["slots out of range", "offsets out of order", "zero counts",
                                 "arrays past the end", "huge header", "wrong dtype"])
def test_a_crafted_file_never_breaks_a_search(
    filled: Store, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    _first_search(filled)
    _crafted(filled, how)
    with caplog.at_level(logging.WARNING, logger="memdir.tools._bm25index"):
        index, hits = _first_search(filled)
        assert hits == _memory_only(filled)
        assert all(index.idf(t) == _memory_index(filled).idf(t) for t in ("trombone", "word3"))
    assert any("ignoring the saved search index" in r.getMessage() for r in caplog.records)
    # The rebuilt index replaced it: the next process takes it up and reads no file.
    assert _first_search(filled)[0].tokenized == 0


def test_an_old_compressed_index_is_left_alone(filled: Store) -> None:
    # The format before this one was a zip of arrays (a deflate bomb could hide there);
    # a file under that name is never opened.
    bomb = filled.root / ".memdir" / "bm25-index.npz"
    bomb.write_bytes(b"PK\x03\x04" + b"\0" * 4096)
    index, hits = _first_search(filled)
    assert hits == _memory_only(filled) and index.tokenized == 42


def _memory_index(store: Store) -> FileIndex:
    index = FileIndex(store)
    index.refresh()
    return index


def test_a_restart_over_unchanged_files_keeps_the_saved_vocabulary_in_place(
        filled: Store) -> None:
    from memdir.tools._bm25file import SavedTerms

    _first_search(filled)
    index, hits = _first_search(filled)
    # Neither the whole vocabulary nor a path-to-slot mapping was built to answer.
    assert isinstance(index._vocab, SavedTerms) and index._slots is None
    assert hits == _memory_only(filled)
    assert index.idf("trombone") == _idf_fresh(filled, "trombone") > 0
    filled.write("/memories/dave.md", note("dave", "Collects trombone records."))
    index.refresh()  # a new term: the mapping is built, the answers stay those of a fresh index
    assert index.search(QUERY, 5) == _memory_only(filled)


def _idf_fresh(store: Store, term: str) -> float:
    index = FileIndex(store)
    index.refresh()
    return index.idf(term)


def test_saved_terms_are_found_where_the_mapping_has_them() -> None:
    from memdir.tools._bm25file import SavedIndexError, SavedTerms

    terms = ["alpha", "beta", "al", "pha", "gamma"]
    found = SavedTerms("\0".join(terms), len(terms))
    assert [found.get(t) for t in terms] == list(range(len(terms)))
    assert found.get("alph") is None and found.get("") is None and found.get("a\0b") is None
    assert found.as_dict() == {t: i for i, t in enumerate(terms)}
    with pytest.raises(SavedIndexError, match="twice"):
        SavedTerms("a\0b\0a", 3).as_dict()
    with pytest.raises(SavedIndexError, match="header says 4"):
        SavedTerms("a\0b\0c", 4)


def test_saved_paths_out_of_order_are_caught_when_the_files_differ(filled: Store) -> None:
    from memdir.tools import _bm25file

    _first_search(filled)
    saved = _bm25file.read_saved(saved_index(filled), FileIndex(filled).tokenizer.stemmer)
    assert saved is not None
    paths = list(saved.paths)
    paths[0], paths[1] = paths[1], paths[0]
    crafted = _bm25file.Saved(saved.stemmer, saved.vocab, paths, saved.segment, saved.lengths,
                              saved.ino, saved.mtime_ns, saved.ctime_ns, saved.size)
    _bm25file.write_saved(saved_index(filled), crafted)
    filled.write("/memories/erin.md", note("erin", "Plays the trombone too."))
    index, hits = _first_search(filled)
    assert hits == _memory_only(filled)
    assert index.tokenized == 43  # the crafted file was distrusted and the index rebuilt
