"""Every benchmark in the catalog has a loader, a grading its questions fit, and cells.

The loaded data must agree with the entry (its locator form, multiple choice exactly
where it grades by option), the study's model-free grade must be the entry's, and a
study config must make one cell per tier only where the entry has tiers.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import get_args

import pytest

from memdir.bench import (
    BENCHMARKS,
    Dataset,
    DatasetError,
    benchmark_paths,
    load_benchmark,
    terminal_questions,
)
from memdir.bench.datasets import Grading
from memdir.conversation import Benchmark
from memdir.study import StudyConfig, grade_answer

DATASETS = ["locomo", "realtalk", "persona_fixture"]


def test_the_catalog_names_the_three_benchmarks() -> None:
    assert tuple(BENCHMARKS) == ("locomo", "realtalk", "personamem")
    for entry in BENCHMARKS.values():
        assert entry.grading in get_args(Grading)
        assert callable(entry.load) and entry.paths("/data")
        assert (entry.default_tier is None) == (not entry.tiers)
        assert entry.default_tier is None or entry.default_tier in entry.tiers
    assert Benchmark is str  # the conversation model leaves the names to the catalog


@pytest.mark.parametrize("fixture", DATASETS)
def test_the_data_agrees_with_its_entry(fixture: str, request: pytest.FixtureRequest) -> None:
    dataset: Dataset = request.getfixturevalue(fixture)
    entry = BENCHMARKS[dataset.benchmark]
    assert {c.locator_kind for c in dataset.conversations} == {entry.locator}
    evaluated = [q for q in dataset.questions if q.evaluated]
    assert evaluated
    for question in evaluated:
        assert bool(question.options) == (entry.grading == "option"), question.id
        grades = grade_answer(question, "(a)")
        if entry.grading == "option":
            assert grades.option_correct is not None and grades.f1 is None
        else:
            assert grades.f1 is not None and grades.option_correct is None


@pytest.mark.parametrize("fixture", DATASETS)
def test_a_cell_asks_the_entrys_questions(fixture: str, request: pytest.FixtureRequest) -> None:
    dataset: Dataset = request.getfixturevalue(fixture)
    entry = BENCHMARKS[dataset.benchmark]
    first = dataset.conversations[0].id
    conversation, questions = entry.cell_questions(dataset, first)
    assert questions and all(q.conversation_id == first for q in questions)
    if dataset.benchmark == "personamem":  # the terminal checkpoint, on the prefix it sees
        assert questions == terminal_questions(dataset, first)
        last = max(q.end_index or 0 for q in questions)
        seen = [t for s in conversation.sessions for t in s.turns]
        assert seen and all(int(t.source_id or 0) < last for t in seen)
    else:
        assert questions == dataset.questions_for(first)
        assert conversation == dataset.conversation(first)


def test_an_entry_loads_from_the_data_folder_layout(fixture_dir: Path, tmp_path: Path) -> None:
    paths = benchmark_paths("personamem", tmp_path, "32k")
    assert [p.name for p in paths] == ["questions_32k.csv", "shared_contexts_32k.jsonl"]
    paths[0].parent.mkdir(parents=True)
    shutil.copy(fixture_dir / "questions_fixture.csv", paths[0])
    with pytest.raises(DatasetError, match="shared_contexts_32k.jsonl"):
        load_benchmark("personamem", tmp_path)  # the default tier
    shutil.copy(fixture_dir / "shared_contexts_fixture.jsonl", paths[1])
    assert load_benchmark("personamem", tmp_path).benchmark == "personamem"


def test_an_unknown_benchmark_is_refused_with_the_list(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown benchmark 'lme'; choose one of locomo"):
        load_benchmark("lme", tmp_path)
    with pytest.raises(ValueError, match="unknown benchmark 'lme'"):
        StudyConfig.model_validate({"name": "x", "benchmarks": [
            {"name": "lme", "conversations": ["a"]}], "variants": ["verbatim"],
            "search": {"models": ["memdir/grep-reader"]}})


def test_only_a_benchmark_with_tiers_makes_a_cell_per_tier() -> None:
    config = StudyConfig.model_validate({"name": "x", "benchmarks": [
        {"name": name, "conversations": ["#1"], "tiers": ["32k", "128k"]}
        for name in BENCHMARKS], "variants": ["verbatim"],
        "search": {"models": ["memdir/grep-reader"]}})
    tiers = {(c.benchmark, c.tier) for c in config.cells()}
    expected = {(n, t) for n, e in BENCHMARKS.items() for t in (["32k", "128k"] if e.tiers
                                                                  else [None])}
    assert tiers == expected
