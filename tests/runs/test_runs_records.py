"""The record base: one version field, the older spelling still read, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.runs import RunRecord, read_record, write_json, write_record
from memdir.skills import ChainManifest, ServedRecord, StepRecord
from memdir.study import CellStatus, QuestionRecord, StoreInfo


class Note(RunRecord):
    version: int = 3
    text: str


def test_the_older_version_spelling_loads_as_version(tmp_path: Path) -> None:
    path = tmp_path / "note.json"
    path.write_text(json.dumps({"schema_version": 2, "text": "kept"}))
    note = read_record(path, Note)
    assert note.version == 2 and note.text == "kept"
    assert "schema_version" not in note.model_dump()


def test_a_record_is_written_with_one_spelling_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "note.json"
    write_record(path, Note(text="é"))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"version": 3, "text": "é"}
    assert read_record(path, Note) == Note(text="é")
    assert [p.name for p in path.parent.iterdir()] == ["note.json"]  # no temporary left


def test_a_damaged_record_names_its_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "note.json"
    path.write_text(json.dumps({"version": 1}))
    with pytest.raises(ValueError, match=r"note\.json is not a valid Note \(text: ") as info:
        read_record(path, Note)
    assert "\n" not in str(info.value)


def test_write_json_replaces_a_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "evals.json"
    write_json(path, [{"log": "a"}])
    write_json(path, [{"log": "a"}, {"log": "b"}])
    assert json.loads(path.read_text()) == [{"log": "a"}, {"log": "b"}]


@pytest.mark.parametrize("kind", [QuestionRecord, CellStatus, StoreInfo, StepRecord,
                                  ServedRecord, ChainManifest])
def test_both_settings_records_share_the_base(kind: type[RunRecord]) -> None:
    assert issubclass(kind, RunRecord)
    assert "version" in kind.model_fields and "schema_version" not in kind.model_fields
