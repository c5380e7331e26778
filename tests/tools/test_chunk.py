"""The chunk retriever: top three chunk files in full, in rank order."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.tools import make_toolset
from memdir.tools._ranked import chunk_set


def _chunk(store: Store, number: int, body: str) -> str:
    path = f"/memories/chunks/chunk-{number:04d}.md"
    store.write(
        path,
        f"---\nname: chunk-{number:04d}\ndescription: Chunk {number}\n---\n{body}\n",
    )
    return path


@pytest.fixture
def chunks(store: Store) -> Store:
    _chunk(store, 1, "Caroline: I went to a pottery class yesterday.\nMelanie: Nice!")
    _chunk(store, 2, "Melanie: My kids love the beach.\nCaroline: We should go camping.")
    _chunk(store, 3, "Caroline: The pottery class made a bowl. Pottery is calming.")
    _chunk(store, 4, "Melanie: I ran a charity race for mental health.")
    _chunk(store, 5, "Caroline: Adoption agencies called back about the pottery fair.")
    return store


async def test_returns_top_three_in_full_in_rank_order(chunks: Store) -> None:
    tools = chunk_set(chunks)
    assert tools.name == "chunk" and list(tools.tools) == ["bm25_chunk_retrieve"]
    result = await tools.call("bm25_chunk_retrieve", {"query": "pottery class"})
    assert not result.is_error, result.content
    heads = [ln for ln in result.content.split("\n") if ln.startswith("=== ")]
    assert heads[:2] == [
        "=== /memories/chunks/chunk-0003.md ===",
        "=== /memories/chunks/chunk-0001.md ===",
    ]
    assert heads[2] == "=== /memories/chunks/chunk-0005.md ==="
    assert len(heads) == 3
    # In full: frontmatter and every line of each chunk.
    assert chunks.read("/memories/chunks/chunk-0003.md").rstrip() in result.content
    assert "description: Chunk 1" in result.content


async def test_fewer_matches_give_fewer_chunks(chunks: Store) -> None:
    result = await chunk_set(chunks).call("bm25_chunk_retrieve", {"query": "charity race"})
    assert result.content.count("=== /memories/") == 1
    assert "chunk-0004.md" in result.content


async def test_no_match_and_garbage_query(chunks: Store) -> None:
    tools = chunk_set(chunks)
    none = await tools.call("bm25_chunk_retrieve", {"query": "saxophone"})
    assert not none.is_error and none.content.startswith("No chunk")
    bad = await tools.call("bm25_chunk_retrieve", {"query": "is it the?"})
    assert bad.is_error and "no searchable words" in bad.content


async def test_every_file_of_the_store_is_a_chunk(chunks: Store) -> None:
    chunks.write("/memories/other.md", "---\nname: other\ndescription: x\n---\nzeppelin\n")
    result = await make_toolset("chunk", chunks).call("bm25_chunk_retrieve", {"query": "zeppelin"})
    assert result.content.startswith("=== /memories/other.md ===")


async def test_real_conversation_chunks(shared_data: Path, store: Store) -> None:
    source = shared_data / "locomo" / "locomo10.json"
    if not source.is_file():
        pytest.skip("locomo10.json is not in ../shared/data")
    sample = json.loads(source.read_text(encoding="utf-8"))[0]["conversation"]
    turns = [
        f"{turn['speaker']}: {turn['text']}"
        for key in sorted(k for k in sample if re.fullmatch(r"session_\d+", k))
        for turn in sample[key]
    ]
    size = 12
    for number, start in enumerate(range(0, len(turns), size), start=1):
        _chunk(store, number, "\n".join(turns[start : start + size]))
    target = 7
    line = max(turns[(target - 1) * size : target * size], key=len)
    result = await chunk_set(store).call("bm25_chunk_retrieve", {"query": line})
    assert not result.is_error
    assert result.content.startswith(f"=== /memories/chunks/chunk-{target:04d}.md ===")
    assert result.content.count("=== /memories/chunks/") == 3
