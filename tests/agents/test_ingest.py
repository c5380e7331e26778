"""ingest: chunking, the management agent writing through the tools, all-or-nothing chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.agents import IngestError, ingest, restore, snapshot
from memdir.conversation import chunk_conversation, load_conversation
from memdir.store import Store
from scripted import Script, calls, text

CONV = {
    "speakers": ["Ana", "Ben"],
    "sessions": [
        {"id": 1, "date": "2024-01-05", "turns": [
            {"speaker": "Ana", "text": "I started a pottery class on Tuesdays."},
            {"speaker": "Ben", "text": "Nice! I got a kitten named Miso."}]},
        {"id": 2, "date": "2024-03-10", "turns": [
            {"speaker": "Ana", "text": "I moved from pottery to weaving."}]},
    ],
}


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV))
    return path


def _note(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: Notes about {name}\n---\n{body}\n"


def test_sessions_become_chunks_with_locators(tmp_path: Path) -> None:
    chunks = chunk_conversation(load_conversation(_file(tmp_path)), 8000)
    assert [c.label for c in chunks] == [
        "Session 1 (Friday 5 January 2024)", "Session 2 (Sunday 10 March 2024)"]
    assert chunks[0].text.startswith("# Session 1\n\nDate: Friday 5 January 2024\n")
    assert "[S1T2] Ben: Nice! I got a kitten named Miso." in chunks[0].text
    blocks = chunk_conversation(load_conversation(_file(tmp_path), locator="block"))
    assert "[B1M2] Ben:" in blocks[0].text and blocks[0].locators == ["B1M1", "B1M2"]


def test_long_sessions_split_at_turn_boundaries(tmp_path: Path) -> None:
    conv = load_conversation(_file(tmp_path))
    chunks = chunk_conversation(conv, 20)
    assert len(chunks) == 3
    assert chunks[0].label == "Session 1, part 1 of 2 (Friday 5 January 2024)"
    assert chunks[0].locators == ["S1T1"] and chunks[1].locators == ["S1T2"]
    assert [c.session for c in chunks] == [1, 1, 2]


async def test_block_locators_choose_the_blocks_prompt(store: Store, tmp_path: Path) -> None:
    script = Script([text("Nothing to keep."), text("Nothing to keep.")])
    result = await ingest(_file(tmp_path), store, script.model(), locator="block")
    script.assert_done()
    assert result.chunks[0].record.prompt_name == "management-blocks"
    assert "[B1M2] Ben: Nice!" in script.seen[0][1].text


def test_plain_text_and_bad_json(tmp_path: Path) -> None:
    plain = tmp_path / "talk.txt"
    plain.write_text("Ana: hello there\n\nsomething without a speaker\n")
    conv = load_conversation(plain)
    assert conv.speakers == ["Ana"] and len(conv.sessions[0].turns) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"sessions": [{"id": 1}]}')
    with pytest.raises(ValueError, match="is not a conversation"):
        load_conversation(bad)


def test_sample_conversation_ingests_one_chunk_per_session() -> None:
    from importlib import resources

    sample = resources.files("memdir.sample").joinpath("conversation.json")
    conv = load_conversation(Path(str(sample)))
    chunks = chunk_conversation(conv)
    assert len(chunks) == len(conv.sessions) and all(c.tokens < 8000 for c in chunks)


async def test_management_agent_writes_through_the_tools(store: Store, tmp_path: Path) -> None:
    script = Script([
        calls(("view", {"path": "/memories"}), ("grep", {"pattern": "Ana", "ignore_case": True})),
        calls(("create", {"path": "/memories/people/ana.md",
                          "file_text": _note("ana", "- Takes a pottery class on Tuesdays [S1T1]")}),
              ("create", {"path": "/memories/people/ben.md",
                          "file_text": _note("ben", "- Has a kitten named Miso [S1T2]")})),
        text("Created people/ana.md and people/ben.md."),
        calls(("str_replace", {"path": "/memories/people/ana.md",
                               "old_str": "- Takes a pottery class on Tuesdays [S1T1]",
                               "new_str": "- Weaves (since March 2024) [S2T1]\n"
                                          "- Earlier: pottery class on Tuesdays, until "
                                          "March 2024 [S1T1]"})),
        text("Updated ana.md."),
    ])
    seen = []
    result = await ingest(_file(tmp_path), store, script.model(), on_chunk=seen.append)
    script.assert_done()
    assert store.files() == ["/memories/people/ana.md", "/memories/people/ben.md"]
    ana = store.read("/memories/people/ana.md")
    assert "Weaves (since March 2024) [S2T1]" in ana and "Earlier: pottery" in ana
    assert [c.index for c in result.chunks] == [1, 2] and len(seen) == 2
    assert result.chunks[0].summary.startswith("Created")
    assert result.chunks[0].record.role == "management"
    assert result.chunks[0].record.prompt_name == "management-conversation"
    assert result.usage.input == 500 and result.cost == pytest.approx(
        sum(c.cost or 0 for c in result.chunks))
    # The chunk reached the model as the user turn, locators included.
    assert "[S1T2] Ben: Nice! I got a kitten named Miso." in script.seen[0][1].text


async def test_a_failed_chunk_leaves_the_store_as_before_it(store: Store, tmp_path: Path) -> None:
    store.create("/memories/keep.md", _note("keep", "original"))
    script = Script([
        text("Nothing to store from chunk 1."),
        calls(("create", {"path": "/memories/new/half.md", "file_text": _note("half", "x")}),
              ("str_replace", {"path": "/memories/keep.md", "old_str": "original",
                               "new_str": "changed"}),
              ("delete", {"path": "/memories/keep.md"})),
        RuntimeError("connection reset, retries exhausted"),
    ])
    before = {p: store.read(p) for p in store.files()}
    with pytest.raises(IngestError, match="chunk 2 of 2") as info:
        await ingest(_file(tmp_path), store, script.model())
    script.assert_done()
    assert {p: store.read(p) for p in store.files()} == before
    assert not (store.root / "new").exists()
    assert "restored" in str(info.value) and "skip_chunks=1" in str(info.value)
    assert len(info.value.result.chunks) == 1 and info.value.chunk.index == 2
    # A rerun resumes at the failed chunk.
    resume = Script([text("Stored chunk 2.")])
    again = await ingest(_file(tmp_path), store, resume.model(), skip_chunks=1)
    assert [c.index for c in again.chunks] == [2]


def test_snapshot_restore_is_exact(store: Store) -> None:
    store.create("/memories/a/b.md", _note("b", "one"))
    snap = snapshot(store)
    store.write("/memories/a/b.md", _note("b", "two"))
    store.create("/memories/c/d.md", _note("d", "new"))
    store.delete("/memories/a/b.md")
    restore(store, snap)
    assert store.files() == ["/memories/a/b.md"]
    assert store.read("/memories/a/b.md").endswith("one\n")
    assert not (store.root / "c").exists()
