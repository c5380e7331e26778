"""The one conversation model: locators, lookups, renumbering; the chunking rule's cuts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.conversation import (
    Conversation,
    Session,
    Turn,
    block_locator,
    chunk_conversation,
    count_tokens,
    parse_locator,
    render_turn,
    split_turns,
    turn_locator,
)


def _conv() -> Conversation:
    sessions = [
        Session(index=s, turns=[Turn(locator=turn_locator(s, t), speaker="Ana", text=f"line {t}")
                                for t in range(1, 4)])
        for s in (1, 2)
    ]
    return Conversation(id="c", speakers=["Ana"], sessions=sessions)


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_locators_parse_back(session: int, turn: int) -> None:
    assert parse_locator(turn_locator(session, turn)) == (session, turn)
    assert parse_locator(f"[{block_locator(session, turn)}]") == (session, turn)


@pytest.mark.parametrize("bad", ["S1", "hello", "S1M2", "T1S1", ""])
def test_bad_locators_are_refused(bad: str) -> None:
    with pytest.raises(KeyError, match="not a source locator"):
        parse_locator(bad)


def test_turn_lookup_and_its_errors() -> None:
    conv = _conv()
    assert conv.turn("S2T3").text == "line 3" and conv.session(2).index == 2
    assert conv.turn_count() == 6 and conv.locator_kind == "session"
    with pytest.raises(KeyError, match="no session 9"):
        conv.turn("S9T1")
    with pytest.raises(KeyError, match="3 turns"):
        conv.turn("S1T4")


def test_renumbering_to_blocks_and_back() -> None:
    conv = _conv()
    blocks = conv.with_locators("block")
    assert [t.locator for t in blocks.turns] == [
        "B1M1", "B1M2", "B1M3", "B2M1", "B2M2", "B2M3"]
    assert blocks.with_locators("block") is blocks
    assert blocks.with_locators("session") == conv


def test_a_turn_without_a_speaker_renders_without_a_colon() -> None:
    assert render_turn(Turn(locator="S1T1", text="hi")) == "[S1T1] hi"
    assert render_turn(Turn(locator="S1T1", speaker="Ana", text="hi")) == "[S1T1] Ana: hi"


@given(st.lists(st.integers(1, 50), min_size=1, max_size=40), st.integers(1, 120))
def test_split_turns_cuts_into_parts_that_fit(sizes: list[int], budget: int) -> None:
    cuts = split_turns(sizes, budget)
    bounds = [0, *cuts, len(sizes)]
    assert bounds == sorted(set(bounds))
    pieces = [sizes[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    assert all(sum(p) <= budget or len(p) == 1 for p in pieces)
    if sum(sizes) <= budget:
        assert cuts == []


def test_chunks_cover_every_turn_once_in_order() -> None:
    conv = _conv()
    line = count_tokens(render_turn(conv.turns[0]))
    chunks = chunk_conversation(conv, budget=2 * line)
    assert [loc for c in chunks for loc in c.locators] == [t.locator for t in conv.turns]
    assert [c.title for c in chunks[:2]] == ["Session 1, part 1 of 2", "Session 1, part 2 of 2"]
    with pytest.raises(ValueError, match="positive"):
        chunk_conversation(conv, budget=0)
