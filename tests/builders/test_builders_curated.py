"""The agent-curated build: a snapshot per chunk, resume after a failure or a SIGKILL, cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builder_models import ChunkWriter

from memdir.bench import Dataset
from memdir.builders import BuildError, BuiltStore, build_curated
from memdir.conversation import chunk_conversation
from memdir.sample import load_sample_conversation

HERE = Path(__file__).resolve().parent


def _files(built: BuiltStore) -> dict[str, bytes]:
    store = built.store
    return {p: store.resolve(p).host.read_bytes() for p in store.files()}


def _steps(built: BuiltStore) -> list[tuple[str, str]]:
    return [(s.tree, s.message) for s in built.history.steps()]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> BuiltStore:
    import asyncio

    writer = ChunkWriter()
    cache = tmp_path_factory.mktemp("whole")
    return asyncio.run(build_curated(load_sample_conversation(), cache, writer.model()))


def test_one_snapshot_per_chunk_and_a_record_per_chunk(uninterrupted: BuiltStore) -> None:
    chunks = chunk_conversation(load_sample_conversation())
    record = uninterrupted.record
    steps = uninterrupted.history.steps()
    assert [s.message for s in steps] == ["empty store"] + [
        f"chunk {c.index}: {c.label}" for c in chunks]
    assert [u.index for u in record.units] == [c.index for c in chunks]
    assert all(u.rounds == 2 and u.tool_calls == 2 and u.tool_errors == 0 for u in record.units)
    assert record.model_calls == 2 * len(chunks)
    assert record.usage.input == record.input_tokens == 200 * len(chunks)
    assert record.cost == pytest.approx(0.0)  # the shipped price of mockllm/model
    assert record.files == [
        f"/memories/sessions/session-{c.index}.md" for c in chunks] + ["/memories/log.md"]
    assert uninterrupted.store.read("/memories/log.md").endswith(f"last: S{len(chunks)}\n")
    state1 = uninterrupted.history.read_state(1)
    assert set(state1) == {"/memories/log.md", "/memories/sessions/session-1.md"}
    assert uninterrupted.history.verify().ok


async def test_a_failed_chunk_resumes_to_the_same_store(tmp_path: Path,
                                                        uninterrupted: BuiltStore) -> None:
    conv = load_sample_conversation()
    failing = ChunkWriter(fail_at=3)
    with pytest.raises(BuildError, match=r"chunk 3 .* failed: .*provider unreachable") as err:
        await build_curated(conv, tmp_path, failing.model())
    assert "2 unit(s) done" in str(err.value)
    folder = next(tmp_path.iterdir())
    # the chunk's own writes were undone: the store is at chunk 2
    assert not (folder / "memories" / "sessions" / "session-3.md").exists()
    assert (folder / "memories" / "log.md").read_text().endswith("last: S2\n")
    rest = ChunkWriter()
    resumed = await build_curated(conv, tmp_path, rest.model())
    assert rest.calls == 2 * (len(chunk_conversation(conv)) - 2)
    assert _files(resumed) == _files(uninterrupted)
    assert _steps(resumed) == _steps(uninterrupted)
    assert [u.index for u in resumed.record.units] == [1, 2, 3, 4]


async def test_a_sigkill_mid_chunk_resumes_to_the_same_store(tmp_path: Path,
                                                             uninterrupted: BuiltStore) -> None:
    cache, marker = tmp_path / "cache", tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    child = subprocess.Popen([sys.executable, str(HERE / "curated_child.py"), str(cache),
                              str(marker), "3"], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline, "the child never reached chunk 3"
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    folder = next(cache.iterdir())
    assert (folder / "memories" / "sessions" / "session-3.md").exists()  # a partial chunk
    rest = ChunkWriter()
    resumed = await build_curated(load_sample_conversation(), cache, rest.model())
    assert rest.calls == 2 * 2
    assert _files(resumed) == _files(uninterrupted)
    assert _steps(resumed) == _steps(uninterrupted)


async def test_cache_hit_makes_no_call_and_a_changed_setting_builds_anew(
        tmp_path: Path) -> None:
    conv = load_sample_conversation()
    first = await build_curated(conv, tmp_path, ChunkWriter().model())
    again = ChunkWriter()
    hit = await build_curated(conv, tmp_path, again.model())
    assert again.calls == 0 and hit.record.reused and not first.record.reused
    assert hit.folder == first.folder and hit.record.units == first.record.units
    other = ChunkWriter()
    miss = await build_curated(conv, tmp_path, other.model(), chunk_tokens=3000)
    assert other.calls > 0 and miss.folder != first.folder
    assert miss.record.key != first.record.key
    assert len(list(tmp_path.iterdir())) == 2


async def test_curated_build_of_a_locomo_conversation(locomo: Dataset, tmp_path: Path) -> None:
    whole = locomo.conversation("conv-50")  # its first five sessions keep the test quick
    conv = whole.model_copy(update={"sessions": whole.sessions[:5]})
    chunks = chunk_conversation(conv, 4000)
    assert len(chunks) >= 5
    writer = ChunkWriter()
    seen: list[int] = []
    built = await build_curated(conv, tmp_path, writer.model(), chunk_tokens=4000,
                                on_chunk=lambda u: seen.append(u.index))
    assert seen == [c.index for c in chunks]
    assert len(built.history.steps()) == len(chunks) + 1
    assert built.record.prompt_name == "management-conversation"
    assert built.record.chunk_tokens == 4000 and built.record.benchmark == "locomo"
    note = built.store.read(f"/memories/sessions/session-{chunks[0].session}.md")
    assert "[S1T1]" in note
