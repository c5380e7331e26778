"""Records written before the run layer (committed in data/old-records) still load and report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memdir.agents import PriceTable, Usage
from memdir.builders import BuildRecord, UnitRecord
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
    # Table 15: one task, solved, the micro rate and its one family's rate
    assert f"| {cell.cell.key} | 1 | 1 | 100.0 |" in md.read_text(encoding="utf-8")
    assert csv.read_text(encoding="utf-8").splitlines()[1].startswith(f"{cell.cell.key},full,0,")


def test_old_question_records_derive_their_figures_from_the_episode(old_study: Path) -> None:
    run = load_run(old_study)
    (record,) = next(iter(run.records.values()))
    copied = json.loads(next(old_study.glob("cells/*/records/*.json")).read_text())
    assert (record.rounds, record.tool_calls, record.tool_errors) == (
        copied["rounds"], copied["tool_calls"], copied["tool_errors"])
    assert record.usage == Usage.model_validate(copied["usage"])
    assert record.cost(run.prices) == run.prices.cost("openai/gpt-5.4-mini", record.usage)
    assert "rounds" not in record.model_dump() and "usage" not in record.model_dump()


def test_an_old_build_record_is_typed_and_its_units_read_their_episodes(old_study: Path) -> None:
    (info,) = load_run(old_study).stores.values()
    build = info.build
    assert isinstance(build, BuildRecord) and build.model_calls == 2
    (unit,) = build.units
    assert unit.episode is not None and unit.copied is None  # the copies were dropped
    assert (unit.rounds, unit.tool_calls, unit.usage.input) == (2, 1, 6400)
    assert unit.summary == "Filed the keeper's painting."


def test_a_unit_record_without_its_episode_keeps_the_copied_figures() -> None:
    unit = UnitRecord.model_validate({"kind": "chunk", "index": 1, "label": "s1", "rounds": 3,
                                      "tool_calls": 2, "usage": {"output": 7}, "summary": "ok"})
    assert unit.episode is None and unit.copied is not None
    assert (unit.rounds, unit.tool_calls, unit.usage.output, unit.summary) == (3, 2, 7, "ok")
    assert UnitRecord.model_validate(unit.model_dump()) == unit


def test_a_step_record_derives_each_roles_figures_from_its_episodes(old_skills: Path) -> None:
    (cell,) = load_skills_run(old_skills)
    (step,) = cell.steps
    prices = PriceTable.load()
    assert step.usage("curation").input == 4200 and step.usage("retrieval").input == 0
    assert step.usage() == step.usage("curation") and step.rounds("curation") == 2
    assert step.cost("retrieval", prices) == 0.0
    assert step.cost("curation", prices) == prices.cost("openai/gpt-5.4-mini", step.usage())
