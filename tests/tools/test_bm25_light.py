"""A search answered from the saved index without numpy (``_bm25light``): the same hits,
scores and text as the index gives, and every doubtful case handed to the index."""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from bm25_store import edit_in_place_keeping_size_and_mtime, note, saved_index

from memdir.store import ROOT, Store
from memdir.tools import _bm25index, _bm25light, _bm25walk
from memdir.tools._bm25index import FileIndex
from memdir.tools._bm25layout import SavedIndexError, open_saved
from memdir.tools._bm25terms import Tokenizer
from memdir.tools._ranked import _report, _scope, search_now

pytestmark = pytest.mark.skipif(
    shutil.which("find") is None or not hasattr(os, "memfd_create"),
    reason="the listing needs GNU find and memfd_create")

_WORDS = [f"w{i}" for i in range(40)] + ["café", "größe", "naïve", "東京", "Ωmega", "ǅemal"]


@pytest.fixture(autouse=True)
def _no_listing_left() -> Iterator[None]:
    yield
    _bm25walk._close_all()
    _bm25index._INDEXES.clear()


def _mixed_store(root: Path, seed: int, files: int = 60) -> Store:
    """Random files over nested folders whose names sort around ``a/``, some exact copies."""
    rng = random.Random(seed)
    store = Store(root, create=True)
    folders = ["a", "a/b", "a-b", "a0", "ab", "c/d/e", "größe", ""]
    for i in range(files):
        words = _WORDS[: rng.randint(3, len(_WORDS))]
        body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 60)))
        folder = rng.choice(folders)
        path = f"/memories/{folder}/f{i}.md" if folder else f"/memories/f{i}.md"
        store.write(path, note(f"f{i}", body + "\nw0 line\n"))
        if i % 7 == 0:  # the same text under another name: tied scores, broken by path
            store.write(path.replace(f"f{i}.md", f"copy-{i}.md"), note(f"f{i}", body))
    return store


def _recorded(store: Store) -> None:
    """What two new processes leave: a saved index, then the record of a listing for it."""
    built = FileIndex(store, saved=saved_index(store), compact_min=1)
    built.refresh()
    _bm25walk.start(str(store.root), store.names.suffixes)
    paired = FileIndex(store, saved=saved_index(store))
    paired.refresh()
    assert (saved_index(store).parent / _bm25walk.PROOF_FILE).exists()


def _light(store: Store, query: str, k: int = 10, path: str = ROOT) -> _bm25light.Answer | None:
    """A new process's light answer: its listing started, then the light search alone."""
    _bm25walk.start(str(store.root), store.names.suffixes)
    return _bm25light.search(store, Tokenizer(), query, k, _scope(store, k, path).virtual)


def _full(store: Store, query: str, k: int = 10, path: str = ROOT) -> tuple[FileIndex, str]:
    """What the index answers, with no listing: it walks the store itself."""
    index = FileIndex(store, saved=saved_index(store))
    index.refresh()
    folder = _scope(store, k, path)
    return index, _report(store, index, query, folder, index.search(query, k, folder.virtual))


_QUERIES = [
    ("w1 w2", 10, ROOT),
    ("w0", 10, ROOT),  # every file: more hits than k, many tied
    ("w0", 50, ROOT),
    ("w3 w3 w17 w3", 5, ROOT),  # repeated terms count once
    ("zzzunknown w5", 10, ROOT),  # an unknown term beside a known one
    ("zzzunknown qqqnever", 10, ROOT),  # no known term: no hit
    ("café größe 東京 Ωmega", 10, ROOT),  # non-ASCII words
    ("CAFÉ Größe", 3, ROOT),  # upper case folds as the tokenizer folds it
    ("ǅemal naïve w39", 1, ROOT),
    ("w1 w2 w0", 3, "/memories/a"),  # a folder: a/ and a/b, not a-b, a0 or ab
    ("w4 café", 10, "/memories/a/b"),
    ("w0 w7", 10, "/memories/größe"),
    ("w5", 10, "/memories/c"),
    ("w0 w1 w2 w3 w4 w5 w6 w7 w8 w9", 2, ROOT),
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_light_answer_is_the_index_answer_to_the_last_bit(tmp_path: Path, seed: int) -> None:
    store = _mixed_store(tmp_path / "s", seed)
    _recorded(store)
    for query, k, path in _QUERIES:
        light = _light(store, query, k, path)
        assert light is not None, query
        index, text = _full(store, query, k, path)
        folder = _scope(store, k, path)
        assert light.hits == index.search(query, k, folder.virtual), query  # floats compared ==
        assert all(light.weights[t] == index.idf(t) for t in Tokenizer()(query))
        assert _report(store, light, query, folder, light.hits) == text, query


def test_search_now_answers_lightly_with_the_full_paths_bytes(tmp_path: Path) -> None:
    store = _mixed_store(tmp_path / "s", 4)
    _recorded(store)
    for query, k, path in _QUERIES:
        _bm25index._INDEXES.clear()
        _bm25walk.start(str(store.root), store.names.suffixes)
        text = search_now(store, query, k, path)
        assert store.root not in _bm25index._INDEXES  # answered without building an index
        assert str(store.root) not in _bm25walk._pending  # its listing used and freed
        assert text == _full(store, query, k, path)[1]


def test_ties_with_the_kth_best_break_by_path(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    for name in ("m", "c", "x", "a", "q"):  # one text, five paths: five equal scores
        store.write(f"/memories/{name}.md", note("same", "tied tied words"))
    store.write("/memories/other.md", note("other", "tied once and more words here"))
    _recorded(store)
    light = _light(store, "tied", 3)
    assert light is not None
    assert [h.path for h in light.hits] == ["/memories/a.md", "/memories/c.md", "/memories/m.md"]
    assert light.hits == _full(store, "tied", 3)[0].search("tied", 3)


def test_the_pruned_scoring_keeps_the_best_where_a_common_term_dominates(tmp_path: Path) -> None:
    # Many files hold only the common word; a few hold the rare one too. The files of
    # the common word alone cannot reach the best three, and are left unscored.
    store = Store(tmp_path / "s", create=True)
    for i in range(120):
        extra = " rare" * (1 + i % 3) if i % 10 == 0 else ""
        store.write(f"/memories/n/{i:03}.md", note(f"n{i}", "common " * (1 + i % 5) + extra))
    _recorded(store)
    for query, k in (("common rare", 3), ("rare common", 12), ("common rare", 13),
                     ("common", 4)):
        light = _light(store, query, k)
        assert light is not None
        assert light.hits == _full(store, query, k)[0].search(query, k), query


def test_an_empty_store_answers_no_hit(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    store.write("/memories/gone.md", note("gone", "soon removed"))
    _recorded(store)
    (store.root / "gone.md").unlink()
    FileIndex(store, saved=saved_index(store), compact_min=1).refresh()  # saves it empty
    _recorded(store)
    light = _light(store, "removed")
    assert light is not None and light.hits == []
    assert _report(store, light, "removed", _scope(store, 10, ROOT), []) \
        == _full(store, "removed")[1]


def test_no_record_yet_hands_the_listing_to_the_index(tmp_path: Path) -> None:
    store = _mixed_store(tmp_path / "s", 5)
    FileIndex(store, saved=saved_index(store)).refresh()  # saved, never paired with a listing
    assert _light(store, "w1") is None
    listing = _bm25walk._pending[str(store.root)]  # handed back, its bytes kept
    output = listing.output()
    assert output is not None and output[0].count(b"\0") == len(list(store.root.rglob("*.md")))
    index = FileIndex(store, saved=saved_index(store))
    index.refresh()  # takes that listing and pairs it: the next process has its record
    assert index.tokenized == 0 and str(store.root) not in _bm25walk._pending
    assert _light(store, "w1") is not None


def test_an_edit_after_the_record_is_left_to_the_index_then_read_again_lightly(
        tmp_path: Path) -> None:
    store = _mixed_store(tmp_path / "s", 6)
    _recorded(store)
    target = next(store.root.rglob("f1.md"))
    edit_in_place_keeping_size_and_mtime(target, b"w0 line\n", b"zoraword")
    assert _light(store, "zoraword") is None  # the listing's change time differs
    _bm25index._INDEXES.clear()
    answer = search_now(store, "zoraword")
    virtual = "/memories/" + target.relative_to(store.root).as_posix()
    assert f"1. {virtual} (score" in answer
    # That process recorded the changed file: later ones read it again, and see it.
    light = _light(store, "zoraword")
    assert light is not None and [h.path for h in light.hits] == [virtual]
    _bm25index._INDEXES.clear()
    _bm25walk.start(str(store.root), store.names.suffixes)
    assert search_now(store, "zoraword") == answer
    assert store.root not in _bm25index._INDEXES


def _changed(store: Store, change: str) -> None:
    """One change made outside memdir, then the new process that notices and records it."""
    root = store.root
    if change == "edit":  # new words, one of them in no saved file
        path = next(root.rglob("f2.md"))
        path.write_text(path.read_text() + "\nnovelword café w1 w1 w1\n")
    elif change == "add":
        (root / "a" / "b" / "new.md").write_text(note("new", "w1 w2 novelword größe"))
    elif change == "remove":
        next(root.rglob("f3.md")).unlink()
    elif change == "rename":
        path = next(root.rglob("f4.md"))
        path.rename(root / "c" / "d" / "e" / "moved.md")
    elif change == "folder":  # a whole folder gone, another file changed beside it
        shutil.rmtree(root / "a" / "b")
        (root / "ab").mkdir(exist_ok=True)
        (root / "ab" / "fresh.md").write_text(note("fresh", "novelword w5 w5"))
    _bm25index._INDEXES.clear()
    _bm25walk.start(str(root), store.names.suffixes)
    FileIndex(store, saved=saved_index(store)).refresh()  # walks once, records what differs
    _bm25index._INDEXES.clear()


@pytest.mark.parametrize("change", ["edit", "add", "remove", "rename", "folder"])
def test_files_a_record_names_are_read_again_as_the_index_reads_them(
        tmp_path: Path, change: str) -> None:
    store = _mixed_store(tmp_path / "s", 10)
    _recorded(store)
    _changed(store, change)
    record = (saved_index(store).parent / _bm25walk.PROOF_FILE).read_text()
    assert record.splitlines()[-1] != "[]"  # it names what changed
    for query, k, path in [*_QUERIES, ("novelword w1", 10, ROOT), ("novelword", 5, "/memories/a"),
                           ("w5 novelword", 3, "/memories/ab")]:
        if not (store.root / path.removeprefix(ROOT).lstrip("/")).is_dir():
            continue  # (the folder was removed)
        light = _light(store, query, k, path)
        assert light is not None, query
        index, text = _full(store, query, k, path)
        folder = _scope(store, k, path)
        assert light.hits == index.search(query, k, folder.virtual), query
        assert all(light.weights[t] == index.idf(t) for t in Tokenizer()(query)), query
        assert _report(store, light, query, folder, light.hits) == text, query


def test_changes_the_index_would_compact_are_left_to_it(tmp_path: Path) -> None:
    # 40 changed files make 80 changed slots (40 gone, 40 read again): enough for an
    # index to fold them into a new saved file. One that folds only past 1,000 recorded
    # them instead; a light search then leaves them to the index, which folds them.
    store = _mixed_store(tmp_path / "s", 11, files=80)
    _recorded(store)
    for path in sorted(store.root.rglob("f*.md"))[:40]:
        path.write_text(path.read_text() + "\nmore w9\n")
    _bm25walk.start(str(store.root), store.names.suffixes)
    FileIndex(store, saved=saved_index(store), compact_min=1000).refresh()
    record = (saved_index(store).parent / _bm25walk.PROOF_FILE).read_text()
    assert len(json.loads(record.splitlines()[-1])) == 40
    assert _light(store, "w9") is None
    before = saved_index(store).stat().st_ino
    search_now(store, "w9")
    assert saved_index(store).stat().st_ino != before  # compacted and saved anew


def test_an_index_of_another_version_or_stemmer_is_left_to_the_index(tmp_path: Path) -> None:
    store = _mixed_store(tmp_path / "s", 7)
    _recorded(store)
    mapped = open_saved(saved_index(store), "another stemmer")
    assert mapped is None  # (a file made with another stemmer is not this tokenizer's)
    data = bytearray(saved_index(store).read_bytes())
    data[: len(b"memdir-bm25\n")] = b"memdir-xxxx\n"
    saved_index(store).write_bytes(bytes(data))
    assert _light(store, "w1") is None


def test_postings_a_record_vouches_for_but_that_fail_their_check_are_not_answered_from(
        tmp_path: Path) -> None:
    # A crafted index with a record made for it: a query term's posting names a slot
    # past the files. The light search refuses it; the index then rebuilds from the files.
    store = _mixed_store(tmp_path / "s", 8)
    _recorded(store)
    target = saved_index(store)
    mapped = open_saved(target, Tokenizer().stemmer)
    assert mapped is not None
    from memdir.tools._bm25file import read_saved

    saved = read_saved(target, Tokenizer().stemmer)
    assert saved is not None
    term = saved.vocab.get("w1")
    assert term is not None
    _, _, slots_at = mapped.extent("slots")
    first = int(saved.segment.indptr[term])
    mapped.buffer.close()
    del saved
    data = bytearray(target.read_bytes())
    struct.pack_into("<i", data, slots_at + 4 * first, 10**6)
    target.write_bytes(bytes(data))
    mapped = open_saved(target, Tokenizer().stemmer)
    assert mapped is not None
    identity = mapped.identity
    mapped.buffer.close()
    listing = _bm25walk.Listing(str(store.root), store.names.suffixes)
    proof = _bm25walk.Proof(listing.digest() or "")
    listing.close()
    _bm25walk.write_proof(str(target.parent / _bm25walk.PROOF_FILE), identity, proof)
    assert _light(store, "w2") is not None  # the damage is not in w2's postings
    assert _light(store, "w1 w2") is None
    _bm25index._INDEXES.clear()
    _bm25walk.start(str(store.root), store.names.suffixes)
    fresh = FileIndex(store)
    fresh.refresh()
    folder = _scope(store, 10, ROOT)
    assert search_now(store, "w1 w2") == _report(store, fresh, "w1 w2", folder,
                                                 fresh.search("w1 w2", 10))


def test_long_postings_are_left_to_the_index(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    store = _mixed_store(tmp_path / "s", 9)
    _recorded(store)
    assert _light(store, "w0") is not None
    monkeypatch.setattr(_bm25light, "MAX_POSTINGS", 3)
    assert _light(store, "w0") is None
    assert str(store.root) in _bm25walk._pending  # handed back for the index


def test_paths_are_found_by_slot_in_any_piece() -> None:
    names = [f"/memories/{i:05}-{'é' * (i % 4)}.md".encode() for i in range(3000)]
    blob = b"\0".join(names)
    found = _bm25light._Paths(blob, len(names))
    assert [found[i] for i in range(len(names))] == names
    assert len(found) == 3000 and len(_bm25light._Paths(b"", 0)) == 0
    with pytest.raises(SavedIndexError):
        _bm25light._Paths(blob, 2999)
    with pytest.raises(IndexError):
        found[3000]
