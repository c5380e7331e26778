"""The user-facing formats: JSON turns and plain text, loaded into the one model."""

from __future__ import annotations

import datetime as dt
import json
from importlib import resources
from pathlib import Path

import pytest

from memdir.conversation import (
    chunk_conversation,
    conversation_from_json,
    load_conversation,
    parse_plain_text,
)
from memdir.sample import load_sample_conversation

TALK = {
    "title": "Two friends",
    "speakers": ["Ana", "Ben"],
    "sessions": [
        {"id": 1, "date": "2024-01-05", "turns": [
            {"speaker": "Ana", "text": "I started a pottery class."},
            {"speaker": "Ben", "text": "I got a kitten named Miso."}]},
        {"id": 2, "date": "2024-03-10T18:30", "turns": [
            {"speaker": "Ana", "text": "I moved from pottery to weaving."}]},
        {"id": 3, "date": "1:56 pm on 8 May, 2023", "turns": [
            {"speaker": "Ben", "text": "Miso is huge now."}]},
    ],
}


def _write(tmp_path: Path, data: object, name: str = "talk.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_json_turns_become_located_turns_and_typed_dates(tmp_path: Path) -> None:
    conv = load_conversation(_write(tmp_path, TALK))
    assert conv.id == "talk" and conv.title == "Two friends" and conv.benchmark is None
    assert [t.locator for t in conv.turns] == ["S1T1", "S1T2", "S2T1", "S3T1"]
    first, second, third = conv.sessions
    assert first.date == dt.date(2024, 1, 5) and not isinstance(first.date, dt.datetime)
    assert second.date == dt.datetime(2024, 3, 10, 18, 30)
    assert third.date is None and third.date_text == "1:56 pm on 8 May, 2023"
    assert conv.turn("[S1T2]").text == "I got a kitten named Miso."


def test_dates_render_as_given(tmp_path: Path) -> None:
    chunks = chunk_conversation(load_conversation(_write(tmp_path, TALK)))
    assert "Date: Friday 5 January 2024\n" in chunks[0].text
    assert "Date: Sunday 10 March 2024, 18:30\n" in chunks[1].text
    assert "Date: 1:56 pm on 8 May, 2023\n" in chunks[2].text


def test_block_locators_on_request(tmp_path: Path) -> None:
    conv = load_conversation(_write(tmp_path, TALK), locator="block")
    assert [t.locator for t in conv.turns] == ["B1M1", "B1M2", "B2M1", "B3M1"]
    assert conv.locator_kind == "block"


@pytest.mark.parametrize(
    ("data", "where"),
    [({"sessions": [{"id": 1}]}, "sessions.0.turns"),
     ({"sessions": []}, "sessions"),
     ({"sessions": [{"id": -1, "turns": []}]}, "sessions.0.id"),
     ([1, 2], "the top level")],
)
def test_a_wrong_shape_names_the_place_and_the_format(
    tmp_path: Path, data: object, where: str
) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(ValueError, match="is not a conversation") as info:
        load_conversation(path)
    assert str(path) in str(info.value) and where in str(info.value)
    assert '"sessions": [{"id", "date", "turns"' in str(info.value)


def test_unreadable_and_invalid_files_say_so(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        load_conversation(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="is not valid JSON"):
        load_conversation(bad)


def test_plain_text_is_one_session(tmp_path: Path) -> None:
    path = tmp_path / "talk.txt"
    path.write_text("Ana: hello there\n\nsomething without a speaker\nBen: hi\n", encoding="utf-8")
    conv = load_conversation(path)
    assert conv.speakers == ["Ana", "Ben"] and len(conv.sessions) == 1
    assert [(t.locator, t.speaker) for t in conv.turns] == [
        ("S1T1", "Ana"), ("S1T2", ""), ("S1T3", "Ben")]
    text = chunk_conversation(conv)[0].text
    assert "[S1T2] something without a speaker\n" in text and "[S1T1] Ana: hello there" in text
    with pytest.raises(ValueError, match="empty"):
        parse_plain_text("\n  \n")


def test_the_sample_file_is_in_the_json_turns_format() -> None:
    source = resources.files("memdir.sample").joinpath("conversation.json")
    from_file = load_conversation(Path(str(source)))
    shipped = load_sample_conversation()
    assert from_file.sessions == shipped.sessions and from_file.speakers == shipped.speakers
    assert chunk_conversation(from_file) == chunk_conversation(shipped)
    assert len(chunk_conversation(shipped)) == len(shipped.sessions) == 4


def test_the_conversion_keeps_the_file_contents() -> None:
    conv = conversation_from_json(TALK, id="x")
    assert [s.index for s in conv.sessions] == [1, 2, 3]
    assert [s.date_text for s in conv.sessions] == [s["date"] for s in TALK["sessions"]]
    assert [(t.speaker, t.text) for t in conv.sessions[0].turns] == [
        (t["speaker"], t["text"]) for t in TALK["sessions"][0]["turns"]]
