"""The shipped sample conversation and the store built from it."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from memdir.conversation import parse_locator
from memdir.sample import (
    NOTES,
    SESSIONS_NOTE,
    Note,
    build_sample_store,
    check_locators,
    load_sample_conversation,
)
from memdir.store import lint_store, load_document

LOCATOR = re.compile(r"\[(S\d+T\d+)\]")


def test_conversation_shape() -> None:
    conv = load_sample_conversation()
    assert conv.speakers == ["Maya", "Theo"]
    assert [s.index for s in conv.sessions] == [1, 2, 3, 4]
    assert [str(s.date) for s in conv.sessions][0] == "2025-03-02"
    dates = [s.date for s in conv.sessions]
    assert dates == sorted(dates)
    assert conv.turn_count() == 60
    assert {t.speaker for s in conv.sessions for t in s.turns} == {"Maya", "Theo"}


def test_the_json_ships_as_package_data() -> None:
    data = resources.files("memdir.sample").joinpath("conversation.json")
    assert data.is_file()


def test_locators() -> None:
    conv = load_sample_conversation()
    assert parse_locator("[S2T5]") == (2, 5)
    assert "Bristol" in conv.turn("S2T1").text
    for bad in ("S9T1", "S1T99", "S0", "hello"):
        with pytest.raises(KeyError):
            conv.turn(bad)


def test_every_cited_turn_exists_and_a_bad_citation_is_refused() -> None:
    conv = load_sample_conversation()
    check_locators(conv, NOTES)
    with pytest.raises(ValueError, match=r"/memories/x.md cites \[S7T1\]"):
        check_locators(conv, (Note("/memories/x.md", "x", "- made up [S7T1]"),))


@pytest.mark.parametrize(
    ("locator", "words"),
    [
        ("S1T2", ["Leeds", "cardiology", "St Aldhelm's"]),
        ("S2T3", ["clinical educator", "Severn Vale", "2 June"]),
        ("S3T1", ["1 June"]),
        ("S3T5", ["2:04:37"]),
        ("S2T8", ["laid off"]),
        ("S3T8", ["Manchester Central Library"]),
        ("S4T2", ["Jonah", "16 August", "Whitby"]),
        ("S4T6", ["Biscuit", "ginger"]),
        ("S4T13", ["17 to 19 October"]),
    ],
)
def test_curated_facts_match_their_sources(locator: str, words: list[str]) -> None:
    text = load_sample_conversation().turn(locator).text
    for word in words:
        assert word in text


def test_built_store_is_clean_and_holds_current_and_past_facts(tmp_path: Path) -> None:
    store = build_sample_store(tmp_path / "s")
    assert lint_store(store) == []
    assert len(store.files()) == len(NOTES) + 1
    maya = load_document(store, "/memories/people/maya.md")
    paths = {s.path for s in maya.sections}
    assert ("Maya", "Home", "Past") in paths
    assert ("Maya", "Work", "Past") in paths
    assert any(x.target == "/memories/events/2025/ada-wedding.md" for x in maya.xrefs)
    wedding = load_document(store, "/memories/events/2025/ada-wedding.md")
    assert any(x.section for x in wedding.xrefs)
    index = store.read(SESSIONS_NOTE)
    assert "2025-09-21 (Sunday)" in index
    for path in store.files():
        body = load_document(store, path).body
        if path != SESSIONS_NOTE:
            assert LOCATOR.search(body), f"{path} cites no source"


def test_build_is_deterministic(tmp_path: Path) -> None:
    first = build_sample_store(tmp_path / "a")
    second = build_sample_store(tmp_path / "b")
    assert first.files() == second.files()
    for path in first.files():
        assert first.read(path) == second.read(path)


def test_build_refuses_to_overwrite(tmp_path: Path) -> None:
    build_sample_store(tmp_path / "s")
    with pytest.raises(ValueError, match="empty folder"):
        build_sample_store(tmp_path / "s")
