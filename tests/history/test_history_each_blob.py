"""File versions streamed from git one at a time: the same bytes, and no more held than one."""

from __future__ import annotations

import hashlib
import os
import tracemalloc
from pathlib import Path

import pytest

from memdir.metrics import Measurer
from memdir.metrics._trajectory import _parse
from memdir.store import Store
from memdir.store.history import History, HistoryError


def _md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\n{body}\n"


def _open_handles() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def history(store: Store) -> History:
    """Two steps: text files, an empty one, one not UTF-8, and one far over a pipe's buffer."""
    for i in range(40):
        store.write(f"/memories/f{i % 3}/n{i}.md", _md(f"n{i}", f"line {i}"))
    (store.root / "empty.md").write_bytes(b"")
    (store.root / "bin.md").write_bytes(b"\xff\xfe\x00 tail\n\n")
    (store.root / "big.md").write_bytes(b"x" * 3_000_000 + b"\n")
    made = History(store)
    made.snapshot("one")
    store.write("/memories/f0/n0.md", _md("n0", "changed"))
    made.snapshot("two")
    return made


def _all_blobs(history: History) -> list[str]:
    return sorted({blob for step in range(2) for blob in history.blobs(step).values()})


def test_each_blob_gives_read_blobs_bytes_in_id_order(history: History) -> None:
    blobs = _all_blobs(history)
    streamed = list(history.each_blob([*blobs, blobs[0]]))  # a repeat is given once
    assert [blob for blob, _ in streamed] == blobs
    assert dict(streamed) == history.read_blobs(blobs)
    for blob, data in streamed:  # each the exact bytes git hashed
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob
    assert {len(data) for _, data in streamed} >= {0, 3_000_001}
    assert list(history.each_blob([])) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to count handles")
def test_stopping_early_stops_git_and_closes_everything(history: History) -> None:
    blobs = _all_blobs(history)
    before = _open_handles()
    stream = history.each_blob(blobs)
    assert next(stream)[0] == blobs[0]
    stream.close()  # the caller stops after one of many
    assert _open_handles() == before
    assert len(list(history.each_blob(blobs))) == len(blobs)  # and a full read still works
    assert _open_handles() == before


def test_an_unknown_blob_is_named_in_the_error(history: History) -> None:
    missing = "0" * 40
    with pytest.raises(HistoryError, match=f"could not read blob {missing}"):
        list(history.each_blob([missing]))
    with pytest.raises(HistoryError, match=f"could not read blob {missing}"):
        history.read_blobs([missing, *_all_blobs(history)])


def test_git_failing_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "plain", create=True)  # no history: git finds no repository
    with pytest.raises(HistoryError, match="git cat-file failed"):
        list(History(store).each_blob(["0" * 40]))


def test_parsing_a_history_holds_one_version_of_its_bytes_at_a_time(store: Store) -> None:
    body = ("filler words " * 20 + "\n") * 400  # about 100 KB a file, 12 MB in all
    for i in range(120):
        store.write(f"/memories/f{i % 4}/n{i}.md", _md(f"n{i}", body + f"word{i}"))
    history = History(store)
    history.snapshot("one")
    wanted = set(history.blobs(0).values())
    total = sum(len(data) for data in history.read_blobs(wanted).values())
    measurer = Measurer()
    tracemalloc.start()
    try:
        _parse(history, measurer, wanted, lambda _: None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all(measurer.has(blob) for blob in wanted)
    # The parsed files keep their text (about the bytes' size); holding every version's
    # bytes as well, and git's whole answer beside them, would add twice as much again.
    assert peak < total * 1.6, (peak, total)
