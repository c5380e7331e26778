"""The verbatim dump, the chunk store and closed-book: real stores, lint-clean, exact content."""

from __future__ import annotations

import pytest

from memdir.bench import DEFAULT_CHUNK_TOKENS, Dataset, chunk_conversation, render_session
from memdir.builders import (
    CHUNK_FOLDER,
    BuildRecord,
    build_chunk_store,
    build_closed_book,
    build_verbatim,
    chunk_files,
    verbatim_files,
)
from memdir.store import (
    FileExistsInStoreError,
    Store,
    lint_store,
    load_document,
    parse_file,
    xrefs,
)


def _size(store: Store, record: BuildRecord) -> int:
    return sum(len(store.read(p).encode("utf-8")) for p in record.files)


def test_verbatim_dump_of_the_locomo_test_conversation(locomo: Dataset, store: Store) -> None:
    conv = locomo.conversation("conv-50")
    record = build_verbatim(conv, store)
    assert record.variant == "verbatim" and record.conversation_id == "conv-50"
    assert len(record.files) == 30 and record.files[0] == "/memories/session-01.md"
    assert store.files() == sorted(record.files)
    assert record.bytes == _size(store, record)
    assert 100 * 1024 < record.bytes < 105 * 1024
    assert (record.model_calls, record.input_tokens, record.output_tokens) == (0, 0, 0)
    assert lint_store(store) == []
    doc = load_document(store, "/memories/session-01.md")
    assert doc.frontmatter is not None
    expected = "Session 1; Thursday 23 March 2023, 11:53; Calvin and Dave"
    assert doc.frontmatter.description == expected
    assert doc.body == render_session(conv.sessions[0])
    turns_in_store = sum(store.read(p).count("\n[S") for p in record.files)
    assert turns_in_store == len(conv.turns)


def test_verbatim_refuses_a_store_that_already_has_the_files(
    locomo: Dataset, store: Store
) -> None:
    conv = locomo.conversation("conv-26")
    build_verbatim(conv, store)
    with pytest.raises(FileExistsInStoreError):
        build_verbatim(conv, store)


def test_chunk_store_of_the_realtalk_test_conversation(realtalk: Dataset, store: Store) -> None:
    conv = realtalk.conversation("Chat_10")
    record = build_chunk_store(conv, store)
    chunks = chunk_conversation(conv)
    assert record.variant == "chunk" and record.chunk_tokens == DEFAULT_CHUNK_TOKENS == 600
    assert record.files == [f"{CHUNK_FOLDER}/session-{c.session:02d}-chunk-{c.part:02d}.md"
                            for c in chunks]
    assert len(set(record.files)) == len(chunks) == 55 > len(conv.sessions)
    assert record.files[:3] == [f"{CHUNK_FOLDER}/session-01-chunk-0{i}.md" for i in (1, 2, 3)]
    assert record.bytes == _size(store, record)
    assert lint_store(store) == []
    first = load_document(store, record.files[0])
    assert first.body == chunks[0].text
    assert first.frontmatter is not None and "turns S1T1-" in first.frontmatter.description


def test_small_budget_gives_more_chunks(persona_fixture: Dataset, store: Store) -> None:
    conv = persona_fixture.conversations[0]
    record = build_chunk_store(conv, store, budget=60)
    assert len(record.files) == len(chunk_conversation(conv, 60)) > 2
    assert lint_store(store) == []


def test_personamem_verbatim(persona_fixture: Dataset, store: Store) -> None:
    conv = persona_fixture.conversations[1]
    record = build_verbatim(conv, store)
    assert record.files == ["/memories/session-01.md"]
    text = store.read(record.files[0])
    assert "description: Session 1; Patient and Therapist" in text
    assert "[B1M2] Patient: Running used to calm me down" in text
    assert lint_store(store) == []


def test_every_real_conversation_renders_lint_clean(locomo: Dataset, realtalk: Dataset) -> None:
    everything = [*locomo.conversations, *realtalk.conversations]
    held_out = [locomo.conversation("conv-50"), realtalk.conversation("Chat_10")]
    rendered = [f for conv in everything for f in verbatim_files(conv)]
    rendered += [f for conv in held_out for f in chunk_files(conv, budget=500)]
    assert len(rendered) > 500
    for path, text in rendered:
        parsed = parse_file(text, path.rsplit("/", 1)[1].removesuffix(".md"))
        assert parsed.defects == [] and xrefs(parsed.body) == [], path


def test_closed_book_builds_nothing(locomo: Dataset) -> None:
    record = build_closed_book(locomo.conversation("conv-50"))
    assert record.variant == "closed-book" and record.files == [] and record.bytes == 0
    assert BuildRecord.model_validate_json(record.model_dump_json()) == record


async def test_chunk_store_serves_the_chunk_retriever(locomo: Dataset, store: Store) -> None:
    from memdir.tools import make_toolset

    conv = locomo.conversation("conv-50")
    build_chunk_store(conv, store)
    tools = make_toolset("chunk", store)
    result = await tools.call("bm25_chunk_retrieve", {"query": "Calvin Tokyo Shibuya crossing"})
    assert not result.is_error, result.content
    heads = [ln for ln in result.content.split("\n") if ln.startswith("=== ")]
    assert len(heads) == 3 and all("/memories/chunks/session-" in h for h in heads)
    assert "Shibuya" in result.content and "[S" in result.content
