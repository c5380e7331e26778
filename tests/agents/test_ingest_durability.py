"""A killed ingest leaves the store as it was before the chunk it was running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "builders"))
from builder_models import ChunkWriter  # noqa: E402 (needs the path above)

from memdir.agents import IngestError, ingest, recover_ingest  # noqa: E402
from memdir.sample import load_sample_conversation  # noqa: E402
from memdir.store import Store  # noqa: E402

HERE = Path(__file__).resolve().parent


def _files(store: Store) -> dict[str, bytes]:
    return {p: store.resolve(p).host.read_bytes() for p in store.files()}


def _store(path: Path) -> Store:
    return Store(path, create=True)


async def _reference(tmp_path: Path, name: str, fail_at: int | None) -> Store:
    store = _store(tmp_path / name)
    if fail_at is None:
        await ingest(load_sample_conversation(), store, ChunkWriter().model())
        return store
    with pytest.raises(IngestError):
        await ingest(load_sample_conversation(), store, ChunkWriter(fail_at=fail_at).model())
    return store


def _kill_mid_chunk(store: Store, tmp_path: Path, hang_at: int) -> None:
    marker = tmp_path / "marker"
    child = subprocess.Popen(
        [sys.executable, str(HERE / "ingest_child.py"), str(store.root), str(marker),
         str(hang_at)], stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline, f"the child never reached chunk {hang_at}"
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    if child.stderr:
        child.stderr.close()


async def test_sigkill_mid_chunk_then_recover_restores_the_store(tmp_path: Path) -> None:
    before_chunk_3 = await _reference(tmp_path, "failed", fail_at=3)
    store = _store(tmp_path / "killed")
    _kill_mid_chunk(store, tmp_path, hang_at=3)
    assert (store.root / "sessions" / "session-3.md").exists()  # the partial chunk
    assert recover_ingest(store) == 3
    assert _files(store) == _files(before_chunk_3)
    assert not (store.root / "sessions" / "session-3.md").exists()
    assert recover_ingest(store) is None  # nothing left to undo


async def test_a_resumed_ingest_repairs_first_and_ends_like_an_uninterrupted_one(
        tmp_path: Path) -> None:
    whole = await _reference(tmp_path, "whole", fail_at=None)
    store = _store(tmp_path / "killed")
    _kill_mid_chunk(store, tmp_path, hang_at=2)
    rest = ChunkWriter()
    result = await ingest(load_sample_conversation(), store, rest.model(), skip_chunks=1)
    assert result.recovered_chunk == 2
    assert rest.calls == 3 * 2
    assert _files(store) == _files(whole)


async def test_a_finished_ingest_leaves_no_journal(tmp_path: Path) -> None:
    store = await _reference(tmp_path, "whole", fail_at=None)
    assert recover_ingest(store) is None
    assert not list((store.root / ".memdir").glob("ingest*"))


def test_an_unreadable_journal_is_one_clear_error(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    (store.root / ".memdir").mkdir(exist_ok=True)
    (store.root / ".memdir" / "ingest-chunk.json").write_text("{not json")
    with pytest.raises(ValueError, match="delete it to keep the store as it is"):
        recover_ingest(store)
