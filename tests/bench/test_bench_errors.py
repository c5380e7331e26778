"""A missing or malformed benchmark file gives a DatasetError naming the file and the fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.bench import DatasetError, load_benchmark, load_locomo, load_realtalk


def _turn(n: int) -> dict[str, str]:
    return {"speaker": "Ann", "dia_id": f"D1:{n}", "text": f"line {n}"}


def _conversation() -> dict[str, object]:
    return {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [_turn(1), _turn(2)],
        "session_2_date_time": "2:00 pm on 9 May, 2023",
    }


def _sample(**change: object) -> dict[str, object]:
    sample: dict[str, object] = {
        "sample_id": "conv-x",
        "conversation": _conversation(),
        "qa": [{"question": "q?", "answer": 7, "evidence": ["D1:2"], "category": 4}],
    }
    sample.update(change)
    return sample


def _write(tmp_path: Path, data: object, name: str = "locomo.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_a_small_valid_file_loads(tmp_path: Path) -> None:
    dataset = load_locomo(_write(tmp_path, [_sample()]))
    assert len(dataset.conversations[0].sessions) == 1
    assert dataset.questions[0].answer == "7"
    assert dataset.questions[0].evidence == ["S1T2"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"nothere\.json: no such file"):
        load_locomo(tmp_path / "nothere.json")


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text("[{oops")
    with pytest.raises(DatasetError, match=r"locomo\.json: is not valid JSON: .* line 1"):
        load_locomo(path)


def test_wrong_top_level(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="expected a JSON list"):
        load_locomo(_write(tmp_path, {"a": 1}))


def test_missing_field_is_named(tmp_path: Path) -> None:
    sample = _sample()
    del sample["qa"]
    with pytest.raises(DatasetError, match=r"conversation #1: field qa"):
        load_locomo(_write(tmp_path, [sample]))


def test_bad_turn_and_bad_date(tmp_path: Path) -> None:
    conversation = _conversation()
    conversation["session_1"] = [{"speaker": "Ann", "text": "no id"}]
    with pytest.raises(DatasetError, match=r"session_1, turn 1: field dia_id"):
        load_locomo(_write(tmp_path, [_sample(conversation=conversation)]))
    conversation["session_1"] = [_turn(1)]
    conversation["session_1_date_time"] = "yesterday"
    with pytest.raises(DatasetError, match="date 'yesterday' does not match"):
        load_locomo(_write(tmp_path, [_sample(conversation=conversation)]))


def test_unknown_category(tmp_path: Path) -> None:
    sample = _sample(qa=[{"question": "q", "answer": "a", "evidence": [], "category": 9}])
    with pytest.raises(DatasetError, match="unknown category 9"):
        load_locomo(_write(tmp_path, [sample]))


def test_realtalk_folder_without_chats(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="holds no Chat_"):
        load_realtalk(tmp_path)


def test_realtalk_duplicate_dialogue_id(tmp_path: Path) -> None:
    turn = {"clean_text": "hi", "speaker": "A", "dia_id": "D1:1",
            "date_time": "29.12.2023, 00:51:12"}
    chat = {"session_1": [turn, turn], "session_1_date_time": "29.12.2023, 00:51:12", "qa": []}
    with pytest.raises(DatasetError, match="D1:1 occurs twice"):
        load_realtalk(_write(tmp_path, chat, "Chat_3_A_B.json"))


def test_load_benchmark_names_the_expected_path(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"personamem/questions_32k\.csv: not found"):
        load_benchmark("personamem", tmp_path)
