"""Records written before the run layer (committed in data/old-records) still load and report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memdir.agents import PriceTable
from memdir.skills import build_report
from memdir.skills import load_run as load_skills_run
from memdir.study import load_run, write_report

OLD = Path(__file__).parent / "data" / "old-records"


@pytest.fixture
def old_study(tmp_path: Path) -> Path:
    return Path(shutil.copytree(OLD / "study", tmp_path / "study"))


@pytest.fixture
def old_skills(tmp_path: Path) -> Path:
    return Path(shutil.copytree(OLD / "skills", tmp_path / "skills"))


def test_an_old_study_run_loads_and_reports(old_study: Path) -> None:
    run = load_run(old_study)
    (status,) = run.complete
    (record,) = run.records[status.cell.key]
    assert record.version == 1
    assert record.episode.rounds == 2 and record.episode.tool_call_count == 2
    text, _ = write_report(old_study)
    assert "| curated |" in text and "Table 2" in text


def test_an_old_skills_run_loads_with_the_older_version_spelling(old_skills: Path) -> None:
    (cell,) = load_skills_run(old_skills)
    assert cell.cell.key == "full-chain.curated_skills.cur-gpt-5_4-mini.exec-expert"
    assert cell.complete  # the chain manifest (schema_version 1) still matches its steps
    (step,) = cell.steps
    assert step.version == 1 and step.curation is not None
    md, csv = build_report(old_skills, PriceTable.load())
    assert f"| {cell.cell.key} | 1 / 1 | 1 / 1 |" in md.read_text(encoding="utf-8")
    assert csv.read_text(encoding="utf-8").splitlines()[1].startswith(f"{cell.cell.key},full,0,")
