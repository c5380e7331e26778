"""The ``find`` listing a new process starts before its imports: it lists what the store's
own walk lists, proves an unchanged store alone, and leaves every doubtful case to that walk."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
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

from memdir.store import ROOT, Store
from memdir.store._paths import open_root
from memdir.store._tree import memory_files
from memdir.tools import _bm25index, _bm25walk
from memdir.tools._bm25index import FileIndex, Hit

pytestmark = pytest.mark.skipif(
    shutil.which("find") is None or not hasattr(os, "memfd_create"),
    reason="the listing needs GNU find and memfd_create")

@pytest.fixture
def filled(tmp_path: Path) -> Store:
    return filled_store(tmp_path / "s", folders=3, filler="filler")


@pytest.fixture(autouse=True)
def _no_listing_left() -> Iterator[None]:
    yield
    _bm25walk._close_all()


class _Walks:
    """Counts the index's own walks (the slow path the listing is there to spare)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = _bm25index.memory_files

        def counted(*args: object, **kwargs: object) -> object:
            self.count += 1
            return original(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(_bm25index, "memory_files", counted)


def _new_process(store: Store, *, listing: bool = True) -> tuple[FileIndex, list[Hit]]:
    """A new process: the listing started first, then a new index, one refresh, one search."""
    if listing:
        _bm25walk.start(str(store.root), store.names.suffixes)
    index = FileIndex(store, saved=saved_index(store))
    index.refresh()
    return index, index.search(QUERY, 5)


def _fresh(store: Store, query: str = QUERY) -> list[Hit]:
    index = FileIndex(store)
    index.refresh()
    return index.search(query, 5)


def _listed(root: Path, split: tuple[str, ...] = ()) -> dict[str, tuple[int, ...]] | None:
    listing = _bm25walk.Listing(str(root), (".md",), split)
    assert listing.split == tuple(n for n in split if n not in ("..", "a*", ".hidden", "-f"))
    found = listing.result()
    if found is None:
        return None
    return {v: tuple(row) for v, row in zip(found[0], found[1].tolist(), strict=True)}


def _walked(root: Path) -> dict[str, tuple[int, ...]]:
    """The store's own walk, with the fingerprint columns a listing holds (inode, ctime, size)."""
    fd = open_root(root)
    try:
        return {v: (st.st_ino, st.st_ctime_ns, st.st_size)
                for v, st in memory_files(fd)}
    finally:
        os.close(fd)


@pytest.mark.parametrize("split", [(), ("f",), ("folder.md", "f"), ("f", "..", "a*", ".hidden"),
                                   ("linked",), ("gone", "f")])
def test_the_listing_holds_what_the_stores_own_walk_holds(
        filled: Store, split: tuple[str, ...]) -> None:
    # Split or not (a second find for some top-level folders), with names the split
    # refuses, a link where a folder was, and a folder gone: the same files.
    root = filled.root
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.md").write_text("x")
    (root / "f" / ".draft.md").write_text("x")
    (root / "f" / "notes.txt").write_text("x")
    (root / "f" / "g1" / "empty").mkdir()
    (root / "spaced name é.md").write_text("x")
    (root / "line\nbreak.md").write_text("x")
    (root / "folder.md").mkdir()
    (root / "folder.md" / "inner.md").write_text("x")
    (root / "link.md").symlink_to(root / "bob.md")
    (root / "linked").symlink_to(root / "f")
    os.mkfifo(root / "pipe.md")
    listed = _listed(root, split)
    if "gone" in split:  # a folder gone since the split was chosen: find fails, no listing
        assert listed is None
        return
    assert listed == _walked(root)
    assert f"{ROOT}/spaced name é.md" in listed and f"{ROOT}/line\nbreak.md" in listed
    assert f"{ROOT}/folder.md/inner.md" in listed and f"{ROOT}/link.md" not in listed


def test_a_name_that_is_not_utf8_gives_no_listing(filled: Store) -> None:
    fd = os.open(bytes(filled.root) + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    assert _listed(filled.root) is None


def test_an_unchanged_store_is_proven_by_the_listing_without_a_walk(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _new_process(filled, listing=False)  # builds and saves the index
    walks = _Walks(monkeypatch)
    index, hits = _new_process(filled)
    assert walks.count == 0 and index.tokenized == 0
    assert hits == _fresh(filled) and {h.path for h in hits} == {
        "/memories/alice.md", "/memories/bob.md"}
    assert _bm25walk.take(str(filled.root), (".md",)) is None  # used once
    before = walks.count
    index.refresh()  # later refreshes do not wait for a listing
    assert walks.count in (before, before + 1)  # a change feed, or a walk of its own



def _change(store: Store, change: str) -> None:
    bob = store.root / "bob.md"
    if change == "same size, time put back":
        edit_in_place_keeping_size_and_mtime(bob, b"trombone", b"zucchini")
    elif change == "edit":
        store.write("/memories/bob.md", note("bob", "Plays the zucchini now."))
    elif change == "add":
        store.write("/memories/carol.md", note("carol", "Grows zucchini."))
    elif change == "remove":
        store.delete("/memories/bob.md")
    elif change == "rename":
        os.rename(bob, store.root / "f" / "zucchini.md")
    elif change == "hard link":
        os.link(store.root / "alice.md", store.root / "f" / "zucchini.md")
    else:
        assert change == "folder removed"
        shutil.rmtree(store.root / "f" / "g1")


_CHANGES = ["same size, time put back", "edit", "add", "remove", "rename", "hard link",
            "folder removed"]


def _answers_as_fresh(index: FileIndex, store: Store) -> None:
    for query in (QUERY, "zucchini", "trombone", "word1 word4 word7 filler"):
        assert index.search(query, 5) == _fresh(store, query), query


@pytest.mark.parametrize("change", _CHANGES)
def test_any_change_since_the_save_is_left_to_the_walk_and_seen(
        filled: Store, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    _new_process(filled, listing=False)
    _change(filled, change)
    walks = _Walks(monkeypatch)
    index, hits = _new_process(filled)
    assert walks.count == 1  # the listing differed from the saved files: the walk decided
    assert hits == _fresh(filled)
    _answers_as_fresh(index, filled)


@pytest.mark.parametrize("change", _CHANGES)
def test_the_process_after_the_one_that_saw_a_change_needs_no_walk(
        filled: Store, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    # The change is too small to compact the index, so the saved index stays as it
    # was; the process that walked recorded which files its listing differs in, and a
    # new process with the same listing reads just those again.
    _new_process(filled, listing=False)
    _change(filled, change)
    _new_process(filled)  # walks, and records the changed paths beside the saved index
    proof = _bm25walk.read_proof(_proof_file(filled), _identity(filled))
    assert proof is not None and proof.changed
    walks = _Walks(monkeypatch)
    for _ in range(2):  # and so on, until the next change
        walks.count = 0  # (the fresh indexes below walk)
        index, hits = _new_process(filled)
        assert walks.count == 0
        # (a hard link moves the change time of the file it links as well)
        assert index.tokenized == {"remove": 0, "folder removed": 0, "hard link": 2}.get(change, 1)
        assert hits == _fresh(filled)
        _answers_as_fresh(index, filled)


def test_a_second_change_after_a_recorded_one_is_seen_and_recorded_in_turn(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _new_process(filled, listing=False)
    _change(filled, "same size, time put back")
    _new_process(filled)
    _change(filled, "add")  # the listing now differs from the one recorded
    walks = _Walks(monkeypatch)
    index, _ = _new_process(filled)
    assert walks.count == 1 and index.tokenized == 2  # bob again, and carol
    _answers_as_fresh(index, filled)
    walks.count = 0  # (the fresh indexes walked)
    index, _ = _new_process(filled)
    assert walks.count == 0 and index.tokenized == 2  # no walk: both recorded
    _answers_as_fresh(index, filled)
    edit_in_place_keeping_size_and_mtime(filled.root / "alice.md", b"hiking", b"skiing")
    walks.count = 0
    index, _ = _new_process(filled)
    assert walks.count == 1 and index.tokenized == 3
    assert index.search("skiing", 5) == _fresh(filled, "skiing") != []


def test_a_record_that_names_paths_is_only_a_hint_of_where_to_look(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # A record whose digest matches names the paths to walk again; what is there is
    # decided by the store's own walk of each path, whatever the record says.
    _new_process(filled, listing=False)
    _new_process(filled)  # records the listing of the unchanged store
    proof_file, identity = _proof_file(filled), _identity(filled)
    recorded = _bm25walk.read_proof(proof_file, identity)
    assert recorded is not None and recorded.changed == ()
    named = ("/memories/alice.md", "/memories/nowhere.md", "/memories/../etc/passwd",
             "/memories/.memdir/bm25-index.bin", "/memories/f", "/elsewhere/x.md", "")
    _bm25walk.write_proof(proof_file, identity, _bm25walk.Proof(recorded.digest, named))
    walks = _Walks(monkeypatch)
    index, hits = _new_process(filled)
    assert walks.count == 0 and index.tokenized == 0  # every file there is as saved
    assert hits == _fresh(filled)
    _answers_as_fresh(index, filled)
    assert len(index) == 42


def test_records_made_at_once_each_hold_for_their_own_listing(filled: Store) -> None:
    # Three processes list the store before any of them records; each then walks and
    # records by a rename. Whichever record is left holds for the next listing.
    _new_process(filled, listing=False)
    _change(filled, "same size, time put back")
    listings = []
    for _ in range(3):
        _bm25walk.start(str(filled.root), (".md",))
        listings.append(_bm25walk.take(str(filled.root), (".md",)))
    for listing in listings:
        assert listing is not None
        _bm25walk._pending[str(filled.root)] = listing
        index = FileIndex(filled, saved=saved_index(filled))
        index.refresh()
        assert index.search("zucchini", 5) == _fresh(filled, "zucchini") != []
    index, hits = _new_process(filled)
    assert index.tokenized == 1 and hits == _fresh(filled)
    _answers_as_fresh(index, filled)


def _proof_file(store: Store) -> str:
    return str(saved_index(store).parent / _bm25index.PROOF_FILE)


def _identity(store: Store) -> tuple[int, ...]:
    """The saved index file as a record names it."""
    st = saved_index(store).stat()
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def test_no_find_means_the_walk_as_before(filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _new_process(filled, listing=False)
    monkeypatch.setenv("PATH", "")
    walks = _Walks(monkeypatch)
    index, hits = _new_process(filled)
    assert walks.count == 1 and index.tokenized == 0 and hits == _fresh(filled)


def test_a_listing_for_other_names_or_another_root_is_not_taken(
        filled: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _new_process(filled, listing=False)
    _bm25walk.start(str(filled.root), (".txt",))
    other = Store(tmp_path / "other", create=True)
    _bm25walk.start(str(other.root), (".md",))
    walks = _Walks(monkeypatch)
    _, hits = _new_process(filled, listing=False)
    assert walks.count == 1 and hits == _fresh(filled)
    assert _bm25walk.take(str(other.root), (".md",)) is not None


def _good(store: Store) -> tuple[bytes, bytes]:
    _bm25walk.start(str(store.root), (".md",))
    listing = _bm25walk.take(str(store.root), (".md",))
    assert listing is not None
    found = listing.output()
    assert found is not None
    return found


def _record(numbers: bytes, index: int) -> bytearray:
    width = _bm25walk._WIDTH
    return bytearray(numbers[index * width:(index + 1) * width])


def _with_record(numbers: bytes, index: int, record: bytes) -> bytes:
    width = _bm25walk._WIDTH
    return numbers[:index * width] + record + numbers[(index + 1) * width:]


def _put(record: bytearray, end: int, text: bytes) -> bytes:
    """``record`` with ``text`` right-aligned to end before column ``end``."""
    record[end - len(text):end] = text
    return bytes(record)


def test_the_listing_reads_the_numbers_find_printed(filled: Store) -> None:
    paths, numbers = _good(filled)
    found = _bm25walk.parse(paths, numbers)
    assert found is not None
    assert {v: tuple(r) for v, r in zip(found[0], found[1].tolist(), strict=True)} \
        == _walked(filled.root)
    assert _bm25walk.parse(b"", b"") is not None
    assert len(_bm25walk.parse(b"", b"")[1]) == 0  # type: ignore[index]


@pytest.mark.parametrize("how", [
    "a record short", "a record long", "a sign", "an exponent", "a blank inside a number",
    "an inode too wide", "a blank in a fraction", "a digit past the nanoseconds",
    "a point moved", "a time past 2262", "no separator", "one path fewer", "no final NUL",
    "a name not UTF-8", "a number too wide for its columns",
])
def test_a_listing_not_in_the_expected_form_is_refused(filled: Store, how: str) -> None:
    paths, numbers = _good(filled)
    width = _bm25walk._WIDTH
    size_end = width - 1
    inode_end = _bm25walk._INT_WIDTH
    record = _record(numbers, 3)
    ctime_point = next(c for c, b in _bm25walk._FIXED if b == ord("."))
    if how == "a record short":
        numbers = numbers[:-1]
    elif how == "a record long":
        numbers += b" "
    elif how == "a sign":
        numbers = _with_record(numbers, 3, _put(record, size_end, b"-5"))
    elif how == "an exponent":
        numbers = _with_record(numbers, 3, _put(record, size_end, b"1e5"))
    elif how == "a blank inside a number":
        numbers = _with_record(numbers, 3, _put(record, size_end, b"12 34"))
    elif how == "an inode too wide":
        numbers = _with_record(numbers, 3, _put(record, inode_end, b"1" * inode_end))
    elif how == "a blank in a fraction":
        record[ctime_point + 1] = ord(" ")
        numbers = _with_record(numbers, 3, bytes(record))
    elif how == "a digit past the nanoseconds":
        record[ctime_point + _bm25walk._FRACTION] = ord("7")
        numbers = _with_record(numbers, 3, bytes(record))
    elif how == "a point moved":
        record[ctime_point], record[ctime_point - 1] = record[ctime_point - 1], record[ctime_point]
        numbers = _with_record(numbers, 3, bytes(record))
    elif how == "a time past 2262":
        numbers = _with_record(numbers, 3, _put(record, ctime_point, b"9999999999"))
    elif how == "no separator":
        record[inode_end] = ord("1")
        numbers = _with_record(numbers, 3, bytes(record))
    elif how == "one path fewer":
        paths = paths[paths.index(b"\0") + 1:]
    elif how == "no final NUL":
        paths = paths[:-1]
    elif how == "a name not UTF-8":
        paths = b"/memories/caf\xe9.md\0" + paths[paths.index(b"\0") + 1:]
    else:  # the number pushes the record one column wider, as find would print it
        numbers = numbers[:3 * width] + b" " + numbers[3 * width:]
    assert _bm25walk.parse(paths, numbers) is None


def test_a_listing_with_the_same_files_under_other_paths_proves_nothing(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # Same inodes and fingerprints, two paths swapped: pairing by inode finds the paths differ.
    _new_process(filled, listing=False)
    paths, numbers = _good(filled)
    names = paths[:-1].split(b"\0")
    names[0], names[1] = names[1], names[0]
    swapped = b"\0".join(names) + b"\0"
    found = _bm25walk.parse(swapped, numbers)
    assert found is not None

    class Canned:
        suffixes = (".md",)
        split = ()

        @staticmethod
        def output() -> tuple[bytes, bytes]:
            return swapped, numbers

        @staticmethod
        def digest() -> str:
            return _bm25walk.digest(swapped, numbers, (".md",))

    monkeypatch.setattr(_bm25index, "take_listing", lambda root, suffixes: Canned())
    walks = _Walks(monkeypatch)
    index, hits = _new_process(filled, listing=False)
    assert walks.count == 1 and hits == _fresh(filled)


def test_the_listing_runs_beside_the_caller(filled: Store) -> None:
    # The listing is another process: starting it returns at once, before find is done.
    _bm25walk.start(str(filled.root), (".md",))
    listing = _bm25walk._pending[str(filled.root)]
    assert [p.pid != os.getpid() for p in listing.processes()] == [True]
    found = listing.result()
    assert found is not None and len(found[0]) == 42
    assert np.all(found[1][:, 2] > 0)


def test_the_listings_copies_of_store_constants_agree_with_the_store() -> None:
    # _bm25walk and the fast command line load before memdir.store, so they keep copies.
    from memdir.cli import _fasttool
    from memdir.store import MARKDOWN

    assert _bm25walk._VIRTUAL_ROOT == ROOT
    assert _fasttool._MARKDOWN_SUFFIXES == MARKDOWN.suffixes


def test_a_find_that_hangs_is_stopped_and_the_walk_answers(
        filled: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _new_process(filled, listing=False)
    stuck = tmp_path / "bin"
    stuck.mkdir()
    (stuck / "find").write_text("#!/bin/sh\nexec sleep 600\n")
    (stuck / "find").chmod(0o755)
    monkeypatch.setenv("PATH", f"{stuck}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(_bm25walk, "FIND_WAIT", 0.2)
    _bm25walk.start(str(filled.root), (".md",))
    listing = _bm25walk.take(str(filled.root), (".md",))
    assert listing is not None
    (process,) = listing.processes()
    assert listing.result() is None
    assert process.poll() is not None  # stopped, not left running
    walks = _Walks(monkeypatch)
    _, hits = _new_process(filled)
    assert walks.count == 1 and hits == _fresh(filled)


def test_a_listing_paired_once_is_recognised_by_its_digest(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first new process pairs the listing and records its digest; the next one
    # finds the same bytes and answers without parsing them, with a fresh index's hits.
    _new_process(filled, listing=False)
    _new_process(filled, listing=True)
    proof = saved_index(filled).parent / _bm25index.PROOF_FILE
    assert proof.is_file()
    parsed: list[int] = []
    real = _bm25index.parse_listing
    monkeypatch.setattr(_bm25index, "parse_listing",
                        lambda *a: parsed.append(1) or real(*a))
    walks = _Walks(monkeypatch)
    index, hits = _new_process(filled, listing=True)
    assert parsed == [] and walks.count == 0 and hits == _fresh(filled)


def test_a_same_size_edit_with_its_time_put_back_defeats_the_digest(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # The edit moves the file's change time, so the listing's bytes and digest differ:
    # the index parses, finds the file changed, and reads it again.
    _new_process(filled, listing=False)
    _new_process(filled, listing=True)
    edit_in_place_keeping_size_and_mtime(filled.root / "bob.md", b"trombone", b"zucchini")
    index, hits = _new_process(filled, listing=True)
    assert index.tokenized == 1
    assert hits == _fresh(filled) and index.search("zucchini", 5) == _fresh(filled, "zucchini")
    assert [h.path for h in index.search("zucchini", 5)] == ["/memories/bob.md"]


def test_a_record_for_another_saved_index_is_ignored(tmp_path: Path) -> None:
    proof = str(tmp_path / "p.proof")
    recorded = _bm25walk.Proof("ab" * 32, ("/memories/a.md", "/memories/é\nx.md"))
    _bm25walk.write_proof(proof, (1, 2, 3, 4, 5), recorded)
    assert _bm25walk.read_proof(proof, (1, 2, 3, 4, 5)) == recorded
    assert _bm25walk.read_proof(proof, (1, 2, 3, 4, 6)) is None
    assert _bm25walk.read_proof(str(tmp_path / "none"), (1, 2, 3, 4, 5)) is None
    _bm25walk.write_proof(proof, (1, 2, 3, 4, 5), _bm25walk.Proof("cd" * 32))
    assert _bm25walk.read_proof(proof, (1, 2, 3, 4, 5)) == _bm25walk.Proof("cd" * 32)


_HEAD = b"memdir-bm25-listing-3 1 2 3 4 5 " + b"ab" * 32


@pytest.mark.parametrize("record", [
    b"memdir-bm25-listing-3 1 2 3 4 5 zz\n[]\n[]",  # not a digest
    b"memdir-bm25-listing-3 1 2 3 4 " + b"ab" * 32 + b"\n[]\n[]",  # an identity short
    b"memdir-bm25-listing-1 1 2 3 4 5 " + b"ab" * 32 + b" \n",  # the first form
    _HEAD,  # no line end
    _HEAD + b"\n[]",  # a line short
    _HEAD + b"\n[]\n[]\n[]",  # a line long
    _HEAD + b"\n[]\n",
    _HEAD + b"\n[]\n{}",
    _HEAD + b"\n{}\n[]",
    _HEAD + b"\n[]\n[1]",
    _HEAD + b"\n[null]\n[]",
    _HEAD + b"\n[]\n[\"/memories/a.md\"",
    _HEAD + b"\n[]\n\xff",
])
def test_a_record_not_in_the_expected_form_is_ignored(tmp_path: Path, record: bytes) -> None:
    proof = tmp_path / "p.proof"
    proof.write_bytes(record)
    assert _bm25walk.read_proof(str(proof), (1, 2, 3, 4, 5)) is None


def test_a_record_that_is_not_a_file_is_ignored(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p.proof")  # opened without blocking, and refused
    assert _bm25walk.read_proof(str(tmp_path / "p.proof"), (1, 2, 3, 4, 5)) is None
    (tmp_path / "real").write_bytes(_HEAD + b"\n[]\n[]")
    (tmp_path / "link.proof").symlink_to(tmp_path / "real")
    assert _bm25walk.read_proof(str(tmp_path / "real"), (1, 2, 3, 4, 5)) is not None
    assert _bm25walk.read_proof(str(tmp_path / "link.proof"), (1, 2, 3, 4, 5)) is None


def test_split_for_deals_the_folders_to_two_even_sides() -> None:
    def paths(counts: dict[str, int], loose: int = 0) -> list[str]:
        found = [f"{ROOT}/{name}/sub/{i}.md" for name, n in counts.items() for i in range(n)]
        return sorted(found + [f"{ROOT}/loose-{i}.md" for i in range(loose)])

    assert _bm25walk.split_for(paths({"a": 3000, "b": 2000, "c": 1500}, loose=10)) == ("a",)
    assert _bm25walk.split_for(paths({"a": 3000, "b": 2000, "c": 1500})) == ("b", "c")
    assert _bm25walk.split_for(paths({"b": 1000, "c": 1000, "d": 1000, "e": 1000})) \
        == ("c", "e")
    assert _bm25walk.split_for(paths({"a": 9000, "b": 1000})) == ()  # one folder holds most
    assert _bm25walk.split_for(paths({"a": 900, "b": 900})) == ()  # too few to be worth it
    assert _bm25walk.split_for(paths({}, loose=5000)) == ()  # nothing but loose files
    # A name find could read as an option or a pattern stays with the first find.
    assert _bm25walk.split_for(paths({"-a": 3000, "b*": 3000, "c": 2000, "d": 100})) \
        == ("c", "d")
    assert _bm25walk.split_for([]) == ()
    # A split in use is kept while it stays even enough, so listings keep their digest.
    even = paths({"a": 3000, "b": 2000, "c": 1500}, loose=10)
    assert _bm25walk.split_for(even, ("b", "c")) == ("b", "c")  # 54 % on the second side
    assert _bm25walk.split_for(even, ("b",)) == ("b",)  # 31 %
    assert _bm25walk.split_for(even, ("c",)) == ("a",)  # 23 %: dealt again
    assert _bm25walk.split_for(even, ("a", "b")) == ("a",)  # 77 %
    assert _bm25walk.split_for(even, ("gone",)) == ("a",)


def test_the_split_recorded_for_an_index_lists_it_in_two_and_is_proven_in_turn(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bm25walk, "_SPLIT_MIN", 10)  # a small store split all the same
    _new_process(filled, listing=False)
    _new_process(filled)  # pairs an unsplit listing and records the split for the next
    proof = _bm25walk.read_proof(_proof_file(filled), _identity(filled))
    assert proof is not None and proof.split == ("f",)
    parsed: list[int] = []
    real = _bm25index.parse_listing
    monkeypatch.setattr(_bm25index, "parse_listing", lambda *a: parsed.append(1) or real(*a))
    walks = _Walks(monkeypatch)
    for expected_parses in (1, 1):  # the split listing is paired once, then recognised
        _bm25walk.start(str(filled.root), (".md",))
        assert _bm25walk._pending[str(filled.root)].split == ("f",)
        index = FileIndex(filled, saved=saved_index(filled))
        index.refresh()
        assert len(parsed) == expected_parses and walks.count == 0 and index.tokenized == 0
        assert index.search(QUERY, 5) == _fresh(filled)
        walks.count = 0
    _change(filled, "same size, time put back")  # and a change is recorded as before
    _new_process(filled)
    walks.count = 0
    index, hits = _new_process(filled)
    assert walks.count == 0 and index.tokenized == 1 and hits == _fresh(filled)
    _answers_as_fresh(index, filled)


def test_a_split_folder_gone_is_left_out_of_the_next_listing(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bm25walk, "_SPLIT_MIN", 10)
    _new_process(filled, listing=False)
    _new_process(filled)
    shutil.rmtree(filled.root / "f")
    _bm25walk.start(str(filled.root), (".md",))
    assert _bm25walk._pending[str(filled.root)].split == ()
    walks = _Walks(monkeypatch)
    index = FileIndex(filled, saved=saved_index(filled))
    index.refresh()
    assert walks.count == 1 and len(index) == 2
    assert index.search(QUERY, 5) == _fresh(filled)


def test_the_record_of_the_first_form_is_left_to_the_versions_that_read_it(
        filled: Store) -> None:
    # Two versions searching one store each keep their own record, neither replacing
    # the other's (else each would pair its listing again at every start).
    _new_process(filled, listing=False)
    first_form = saved_index(filled).parent / "bm25-listing.proof"
    first_form.write_bytes(b"memdir-bm25-listing-1 1 2 3 4 5 " + b"ab" * 32 + b" \n")
    _new_process(filled)
    assert first_form.read_bytes().startswith(b"memdir-bm25-listing-1 ")
    assert _bm25walk.read_proof(_proof_file(filled), _identity(filled)) is not None
    assert _bm25index.PROOF_FILE != first_form.name


def test_same_files_asks_for_every_walked_file_once_with_its_fingerprint() -> None:
    walked = ["/memories/a.md", "/memories/b.md", "/memories/c.md"]
    fp = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], dtype=np.int64)
    rows = fp[:, _bm25walk.LISTED]  # what find prints: inode, change time, size
    assert rows.tolist() == [[1, 3, 4], [5, 7, 8], [9, 11, 12]]
    same = _bm25index._same_files
    assert same((["/memories/c.md", "/memories/a.md", "/memories/b.md"], rows[[2, 0, 1]]),
                walked, fp)
    assert not same((walked, rows + np.array([0, 1, 0])), walked, fp)  # a change time moved
    assert not same((walked, rows + np.array([0, 0, 1])), walked, fp)  # a size
    assert not same((walked, rows + np.array([1, 0, 0])), walked, fp)  # an inode
    assert not same((["/memories/a.md", "/memories/a.md", "/memories/c.md"], rows[[0, 0, 2]]),
                    walked, fp)  # one listed twice, one not at all
    assert not same((["/memories/a.md", "/memories/b.md", "/memories/d.md"], rows), walked, fp)
    assert not same((walked[:2], rows[:2]), walked, fp)
    assert same(([], rows[:0]), [], fp[:0])


def test_a_change_between_the_listing_and_the_walk_is_not_recorded(
        filled: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # The record says what a listing means; a walk that saw more than the listing
    # showed cannot say it, so nothing is recorded and the next process walks again.
    _new_process(filled, listing=False)
    _change(filled, "edit")
    _bm25walk.start(str(filled.root), (".md",))
    for process in _bm25walk._pending[str(filled.root)].processes():
        assert process.wait() == 0  # the listing is done: bob changed, alice not yet
    edit_in_place_keeping_size_and_mtime(filled.root / "alice.md", b"hiking", b"skiing")
    walks = _Walks(monkeypatch)
    index = FileIndex(filled, saved=saved_index(filled))
    index.refresh()
    assert walks.count == 1 and index.tokenized == 2
    assert not Path(_proof_file(filled)).exists()
    _answers_as_fresh(index, filled)
    walks.count = 0
    index, _ = _new_process(filled)
    assert walks.count == 1  # and this one, whose listing shows both, records them
    assert _bm25walk.read_proof(_proof_file(filled), _identity(filled)) is not None
