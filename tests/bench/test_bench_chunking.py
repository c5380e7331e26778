"""The chunking rule: sessions are chunks unless over budget; splits are balanced and ordered."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memdir.bench import (
    Conversation,
    Dataset,
    Session,
    Turn,
    chunk_conversation,
    count_tokens,
    render_turn,
    split_turns,
)
from memdir.conversation import SESSION_CHUNK_TOKENS


def _parts(sizes: list[int], cuts: list[int]) -> list[list[int]]:
    bounds = [0, *cuts, len(sizes)]
    return [sizes[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def test_tokens_are_counted_offline() -> None:
    assert count_tokens("Hello world") == 2
    assert count_tokens("") == 0


def test_under_budget_is_one_part() -> None:
    assert split_turns([100, 200, 300], 600) == []


def test_over_budget_splits_into_near_equal_parts() -> None:
    cuts = split_turns([100] * 10, 600)
    assert cuts == [5]
    assert [sum(p) for p in _parts([100] * 9, split_turns([100] * 9, 300))] == [300, 300, 300]


def test_an_oversized_turn_stands_alone() -> None:
    sizes = [50, 5000, 50]
    parts = _parts(sizes, split_turns(sizes, 1000))
    assert [5000] in parts and all(sum(p) <= 1000 or len(p) == 1 for p in parts)


@given(st.lists(st.integers(1, 900), min_size=1, max_size=60), st.integers(100, 3000))
def test_split_properties(sizes: list[int], budget: int) -> None:
    cuts = split_turns(sizes, budget)
    assert cuts == sorted(set(cuts)) and all(0 < c < len(sizes) for c in cuts)
    parts = _parts(sizes, cuts)
    assert [s for p in parts for s in p] == sizes
    assert all(sum(p) <= budget or len(p) == 1 for p in parts)
    assert len(parts) >= -(-sum(sizes) // budget) or max(sizes) > budget
    assert split_turns(sizes, budget) == cuts


def _conversation(turns: int, words: int) -> Conversation:
    text = " ".join(["memory"] * words)
    session = Session(
        index=1,
        turns=[Turn(locator=f"S1T{i}", speaker="Ann", text=text) for i in range(1, turns + 1)],
    )
    return Conversation(id="c", benchmark="locomo", speakers=["Ann"], sessions=[session])


def test_long_session_splits_at_turn_boundaries() -> None:
    conv = _conversation(turns=40, words=100)
    chunks = chunk_conversation(conv, budget=1000)
    assert len(chunks) > 1
    assert [c.index for c in chunks] == list(range(1, len(chunks) + 1))
    assert [loc for c in chunks for loc in c.locators] == [t.locator for t in conv.turns]
    assert all(c.tokens <= 1000 for c in chunks)
    assert max(c.tokens for c in chunks) - min(c.tokens for c in chunks) <= 110
    assert chunks[0].title == f"Session 1, part 1 of {len(chunks)}"
    assert chunks[0].text.startswith(f"# Session 1, part 1 of {len(chunks)}\n")
    assert render_turn(conv.turns[0]) in chunks[0].text


def test_real_conversations_are_one_chunk_per_session(locomo: Dataset, realtalk: Dataset) -> None:
    conv = locomo.conversation("conv-50")
    chunks = chunk_conversation(conv, SESSION_CHUNK_TOKENS)
    assert len(chunks) == len(conv.sessions) == 30
    first = chunks[0]
    assert first.text.splitlines()[:4] == [
        "# Session 1", "", "Date: Thursday 23 March 2023, 11:53", "Speakers: Calvin, Dave",
    ]
    assert "[S1T1] Calvin: Hey Dave!" in first.text
    chat = realtalk.conversation("Chat_10")
    chat_chunks = chunk_conversation(chat, SESSION_CHUNK_TOKENS)
    assert [loc for c in chat_chunks for loc in c.locators] == [t.locator for t in chat.turns]
    assert chunk_conversation(chat, SESSION_CHUNK_TOKENS) == chat_chunks


def test_photo_captions_are_rendered(locomo: Dataset) -> None:
    turn = next(t for t in locomo.conversation("conv-26").turns if t.image_caption)
    assert render_turn(turn).endswith(f" [shares a photo: {turn.image_caption}]")


def test_personamem_blocks_chunk_with_block_locators(persona_fixture: Dataset) -> None:
    conv = persona_fixture.conversations[0]
    chunks = chunk_conversation(conv)
    assert [c.span for c in chunks] == ["B1M1-B1M7", "B2M1-B2M4"]
    assert "[B2M2] User: My cello teacher" in chunks[1].text
    small = chunk_conversation(conv, budget=60)
    assert len(small) > 2
    assert [loc for c in small for loc in c.locators] == [t.locator for t in conv.turns]
