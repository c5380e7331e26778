"""The offline study end to end on the real benchmark files, judged, resumed and reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from memdir.study import StudyConfig, load_run, log_dir, run_study, write_report

from .helpers import SHARED_DATA, FailingSearcher, ScriptedJudge, model_events, smoke_config

LIMIT = 12
JUDGED = 3


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ScriptedJudge]:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    judge = ScriptedJudge()
    config = smoke_config(SHARED_DATA, LIMIT,
                          judge={"model": "mockllm/model", "limit": JUDGED})
    out = tmp_path_factory.mktemp("run")
    statuses = run_study(config, out, models={"mockllm/model": judge.model()})
    assert [s.status for s in statuses] == ["complete"] * 6
    return out, judge


def test_every_question_gets_a_graded_record(smoke_run: tuple[Path, ScriptedJudge]) -> None:
    out, _ = smoke_run
    run = load_run(out)
    assert len(run.complete) == 6 and not run.failed
    for status in run.complete:
        records = run.records[status.cell.key]
        assert len(records) == LIMIT == status.answered
        assert [r.order for r in records] == list(range(1, LIMIT + 1))
        for r in records:
            assert r.grades.f1 is not None and 0.0 <= r.grades.f1 <= 1.0
            assert r.zero_cost_baseline and r.cost(run.prices) == 0.0
            assert set(r.evidence_seen) <= set(r.evidence)
            assert set(r.evidence_cited) <= set(r.evidence)
            assert r.episode.model == "memdir/grep-reader"
        if status.cell.variant == "closed-book":
            assert all(r.tool_calls == 0 and not r.reads for r in records)
        else:
            assert all(r.tool_calls > 0 and r.reads for r in records)
            assert all(c["resolved"] for r in records for c in r.citations)
    verbatim = run.records[next(s.cell.key for s in run.complete
                                if s.cell.variant == "verbatim")]
    # the offline policy greps the verbatim dump: it sees the evidence of most questions
    assert sum(1 for r in verbatim if r.evidence_seen) >= LIMIT // 2
    assert any(r.reads[0].tool == "view" for r in verbatim)


def test_each_cell_is_one_inspect_eval_of_its_records(
        smoke_run: tuple[Path, ScriptedJudge]) -> None:
    out, _ = smoke_run
    run = load_run(out)
    logs = list_eval_logs(str(log_dir(out)))
    assert len(logs) == 6  # one eval per cell, nothing answered twice
    by_task = {read_eval_log(info, header_only=True).eval.task: info for info in logs}
    assert set(by_task) == {s.cell.key for s in run.complete}
    for status in run.complete:
        key = status.cell.key
        evals = json.loads((out / "cells" / key / "evals.json").read_text())
        assert [(e["status"], e["samples"]) for e in evals] == [("success", LIMIT)]
        log = read_eval_log(by_task[key])
        assert log.status == "success" and log.samples is not None
        records = {r.question_id: r for r in run.records[key]}
        assert {s.id for s in log.samples} == set(records)
        for sample in log.samples:
            record = records[str(sample.id)]
            assert sample.output.completion == record.answer
            assert sample.scores is not None
            assert sample.scores["study_grade"].value == pytest.approx(record.grades.f1)
            searches = model_events(sample, "memdir/grep-reader")
            # the transcript holds every round the record counts, tool calls included
            assert len(searches) == record.rounds
            called = [c.function for e in searches for c in e.output.message.tool_calls or []]
            assert len(called) == record.tool_calls
            judged = model_events(sample, "mockllm/model")
            assert len(judged) == (0 if record.grades.judge_correct is None else
                                   1 + (record.grades.attribution is not None))


def test_the_judge_grades_the_first_questions(smoke_run: tuple[Path, ScriptedJudge]) -> None:
    out, judge = smoke_run
    run = load_run(out)
    # correctness on every cell, attribution only where there is a store
    assert judge.correctness == 6 * JUDGED
    assert judge.attribution == 4 * JUDGED
    for status in run.complete:
        records = run.records[status.cell.key]
        judged = [r for r in records if r.grades.judge_correct is not None]
        assert [r.order for r in judged] == list(range(1, JUDGED + 1))
        assert all(r.grades.judge_usage is not None and r.grades.judge_usage.input > 0
                   for r in judged)
        has_store = status.cell.variant != "closed-book"
        assert all((r.grades.attribution is not None) == has_store for r in judged)


def test_the_manifest_pins_the_run(smoke_run: tuple[Path, ScriptedJudge]) -> None:
    out, _ = smoke_run
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["prompt_hashes"]) == {"search-closed-book", "search-chunk", "search-flat"}
    assert set(manifest["toolset_digests"]) == {"read", "chunk"}
    assert any(p.endswith("locomo10.json") for p in manifest["datasets"])
    assert all(len(h) == 64 for h in manifest["datasets"].values())
    assert manifest["seed"] == 0 and "inspect-ai" in manifest["versions"]
    assert (out / "config.yaml").read_text().startswith("name: smoke")


def test_report_from_records(smoke_run: tuple[Path, ScriptedJudge]) -> None:
    out, _ = smoke_run
    text, written = write_report(out, "md")
    assert written[0] == out / "report" / "report.md"
    assert {p.suffix for p in written[1:]} == {".png"}  # the figures, linked from report.md
    for title in ("Table 1 — correctness, locomo", "Table 1 — correctness, realtalk",
                  "Table 2", "Table 3", "Retrieval diagnostics", "Paired sign tests"):
        assert title in text
    assert "temporal (2)" in text and "commonsense (3)" in text
    assert "(none: every cell completed)" in text
    _, csvs = write_report(out, "csv")
    names = {p.name for p in csvs}
    assert {"table1-locomo.csv", "table2.csv", "table3.csv", "diagnostics.csv",
            "sign-tests.csv"} <= names
    table3 = (out / "report" / "table3.csv").read_text().splitlines()
    verbatim = next(line for line in table3 if line.startswith("locomo__conv-50__verbatim"))
    # conv-50's verbatim dump: 30 files, 104,492 bytes (docs/datasets.md)
    assert ",30,104492," in verbatim


def test_rerun_skips_answered_questions(smoke_run: tuple[Path, ScriptedJudge],
                                        shared_data: Path) -> None:
    out, _ = smoke_run
    judge = ScriptedJudge()
    config = smoke_config(shared_data, LIMIT, judge={"model": "mockllm/model", "limit": JUDGED})
    before = {p: p.stat().st_mtime_ns for p in out.glob("cells/*/records/*.json")}
    logs = len(list_eval_logs(str(log_dir(out))))
    statuses = run_study(config, out, models={"mockllm/model": judge.model()})
    assert all(s.status == "complete" for s in statuses)
    assert judge.correctness == 0  # nothing re-answered, so nothing re-judged
    assert {p: p.stat().st_mtime_ns for p in out.glob("cells/*/records/*.json")} == before
    assert len(list_eval_logs(str(log_dir(out)))) == logs  # no eval: nothing was pending


def _mock_config(data: Path, limit: int) -> StudyConfig:
    return smoke_config(data, limit, benchmarks=[
        {"name": "locomo", "conversations": ["conv-50"], "limit": limit}],
        variants=["verbatim"], search={"models": ["mockllm/model"]}, concurrency=1)


def test_interrupted_cell_fails_then_resumes(tmp_path: Path, shared_data: Path) -> None:
    config = _mock_config(shared_data, 6)
    dying = FailingSearcher(good=4)
    [status] = run_study(config, tmp_path, models={"mockllm/model": dying.model()})
    assert status.status == "failed" and status.answered == 4
    assert "provider unreachable" in (status.reason or "")
    assert "conv-50/q005" in (status.reason or "")  # the question whose sample failed
    # four answers, then the fifth question and its one retry (the sixth may have started
    # while the fifth waited for its retry); the eval stops at the first sample that fails
    assert 6 <= dying.calls <= 8
    # a failed cell is never reported, not even from its four records
    run = load_run(tmp_path)
    assert run.records == {} and run.failed[0].answered == 4
    text, _ = write_report(tmp_path)
    assert "Cells not reported" in text and "provider unreachable" in text
    assert "Table 1 —" not in text  # no complete cell, so no correctness table at all

    healthy = FailingSearcher(good=None)
    [status] = run_study(config, tmp_path, models={"mockllm/model": healthy.model()})
    assert status.status == "complete" and status.answered == 6 and status.reason is None
    assert healthy.calls == 2  # only the two questions without a record
    evals = json.loads((tmp_path / "cells" / status.cell.key / "evals.json").read_text())
    assert [(e["status"], e["samples"]) for e in evals] == [("error", 6), ("success", 2)]
    resumed = read_eval_log(str(tmp_path / evals[1]["log"]))
    assert [s.id for s in resumed.samples or []] == ["conv-50/q005", "conv-50/q006"]
    run = load_run(tmp_path)
    [records] = run.records.values()
    assert [r.usage.input for r in records] == [500] * 6
    assert all(r.cost(run.prices) == 0.0 for r in records)  # mockllm is priced at zero
    text, _ = write_report(tmp_path)
    assert "Table 1 — correctness, locomo" in text and "provider unreachable" not in text


def test_a_store_that_cannot_be_built_fails_its_cell(tmp_path: Path, shared_data: Path) -> None:
    builder = FailingSearcher(good=0)  # the management model's provider is down
    config = smoke_config(shared_data, 2, benchmarks=[
        {"name": "locomo", "conversations": ["conv-50"], "limit": 2}],
        variants=["verbatim", "curated"], management={"models": ["mockllm/model"]})
    statuses = run_study(config, tmp_path, models={"mockllm/model": builder.model()})
    assert [s.status for s in statuses] == ["complete", "failed"]
    assert "curated" in (statuses[1].reason or "")
    assert "provider unreachable" in (statuses[1].reason or "")
    assert statuses[1].answered == 0 and builder.calls >= 1
    assert not (tmp_path / "cells" / statuses[1].cell.key / "evals.json").exists()  # no eval
    run = load_run(tmp_path)
    assert list(run.records) == [statuses[0].cell.key]
