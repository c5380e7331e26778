"""Re-judging a finished run, with an OpenAI-compatible judge served on loopback.

A small study (LoCoMo conv-50, a few questions, the offline searcher) is judged
through inspect_ai's ``openai-api`` provider by a fake server that grades from
the prompt's own text; the run is then re-judged with the server flipping a
known subset of grades, and the movement table must be exactly what the flips
imply. The command line is driven for real (a subprocess) for a provider that
fails mid-way (one error line, resumable) and for Ctrl-C (exit 130, a resume line).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from agents.fake_judge import FakeJudge, correct, flipped
from memdir.bench.judge import CORRECTNESS_PROMPT, template_text
from memdir.cli import app
from memdir.config import get_settings
from memdir.study import load_run, run_study, write_report
from memdir.study._config import JudgeSettings
from memdir.study._grading import judge_pin
from memdir.study._manifest import read_study_manifest
from memdir.study._rejudge import movement_table, rejudge_run

from .helpers import OFFLINE, SHARED_DATA

JUDGE = "openai-api/fakejudge/judge"
"""The judge as the study names it: FAKEJUDGE_BASE_URL points inspect_ai at the server."""
LIMIT = 8
@pytest.fixture(scope="module")
def fake() -> Iterator[FakeJudge]:
    server = FakeJudge()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAKEJUDGE_BASE_URL", server.base_url)
        patch.setenv("FAKEJUDGE_API_KEY", "test-key")
        yield server
    server.close()


def _config(data: Path) -> dict[str, object]:
    return {"name": "rejudge-smoke", "data_dir": str(data),
            "benchmarks": [{"name": "locomo", "conversations": ["conv-50"], "limit": LIMIT}],
            "variants": ["closed-book", "verbatim"], "search": {"models": [OFFLINE]},
            "judge": {"model": JUDGE}, "concurrency": 2}


@pytest.fixture(scope="module")
def judged_run(fake: FakeJudge, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    from memdir.study import StudyConfig

    out = tmp_path_factory.mktemp("judged") / "run"
    fake.mode, fake.fail_after = "same", None
    statuses = run_study(StudyConfig.model_validate(_config(SHARED_DATA)), out)
    assert [s.status for s in statuses] == ["complete", "complete"], statuses
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(run, target)
    for path in (target / "stores").glob("*.json"):  # the infos name the store's folder
        path.write_text(path.read_text().replace(str(run), str(target)))
    return target


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted((folder / "cells").rglob("*.json"))}


def _expected(run: Path) -> dict[str, tuple[int, int, int, int, int]]:
    """Per cell from the first records alone: items, first, second, up, down."""
    found = {}
    for key, records in load_run(run).records.items():
        judged = [r for r in records if r.grades.judge_correct is not None]
        firsts = [r.grades.judge_correct or 0 for r in judged]
        flips = [flipped(r.question) for r in judged]
        seconds = [1 - a if f else a for a, f in zip(firsts, flips, strict=True)]
        found[key] = (len(judged), sum(firsts), sum(seconds),
                      sum(1 for a, f in zip(firsts, flips, strict=True) if f and a == 0),
                      sum(1 for a, f in zip(firsts, flips, strict=True) if f and a == 1))
    return found


def test_the_first_judging_went_through_the_loopback_provider(judged_run: Path) -> None:
    run = load_run(judged_run)
    for key, records in run.records.items():
        assert len(records) == LIMIT
        calls = 2 if "verbatim" in key else 1  # attribution only where there is a store
        for r in records:
            assert r.grades.judge_error is None
            assert r.grades.judge_correct == correct(r.gold or "", r.answer)
            assert r.grades.judge_usage is not None
            assert r.grades.judge_usage.input == 300 * calls
    verbatim = next(k for k in run.records if "verbatim" in k)
    assert all(r.grades.attribution for r in run.records[verbatim])
    closed = next(k for k in run.records if "closed-book" in k)
    assert all(r.grades.attribution is None for r in run.records[closed])


def test_the_manifest_pins_the_judge(judged_run: Path) -> None:
    manifest = read_study_manifest(judged_run)
    assert manifest is not None and manifest.judge is not None
    pin = judge_pin(JudgeSettings(model=JUDGE))
    assert pin is not None and manifest.judge == pin
    assert manifest.judge.model == JUDGE
    assert set(manifest.judge.templates) == {"judge-correctness", "judge-attribution"}
    assert manifest.judge.templates["judge-correctness"] == hashlib.sha256(
        template_text(CORRECTNESS_PROMPT).encode()).hexdigest()
    assert manifest.judge.roles["correctness"]["temperature"] == 0.0


def test_changing_a_template_or_a_setting_changes_the_judge_hash() -> None:
    settings = JudgeSettings(model=JUDGE)
    base = judge_pin(settings)
    assert base is not None
    texts = {name: template_text(name) for name in base.templates}
    edited = dict(texts, **{CORRECTNESS_PROMPT: texts[CORRECTNESS_PROMPT].replace(
        "Judge only correctness", "Judge nothing but correctness")})
    assert edited[CORRECTNESS_PROMPT] != texts[CORRECTNESS_PROMPT]
    assert "{{gold}}" in texts[CORRECTNESS_PROMPT]  # a field's place is part of the template
    again = judge_pin(settings, templates=texts)
    changed = judge_pin(settings, templates=edited)
    assert again is not None and again.hash == base.hash
    assert changed is not None and changed.hash != base.hash
    assert changed.templates["judge-attribution"] == base.templates["judge-attribution"]
    for other in (JudgeSettings(model=JUDGE, effort="high"),
                  JudgeSettings(model="openai/gpt-5.4-mini"),
                  JudgeSettings(model=JUDGE, attribution=False)):
        pin = judge_pin(other)
        assert pin is not None and pin.hash != base.hash
    assert judge_pin(JudgeSettings()) is None


def test_a_run_judged_with_other_templates_is_not_resumed_silently(
        judged_run: Path, tmp_path: Path) -> None:
    from memdir.study import StudyConfig

    run = _copy(judged_run, tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["judge"]["hash"] = "0" * 64  # as written by an earlier judge template
    (run / "manifest.json").write_text(json.dumps(manifest))
    config = StudyConfig.model_validate(_config(SHARED_DATA))
    with pytest.raises(ValueError, match="other judge prompts or settings.*study rejudge"):
        run_study(config, run)


def test_rejudging_with_flips_moves_exactly_as_the_flips_imply(
        fake: FakeJudge, judged_run: Path, tmp_path: Path) -> None:
    run = _copy(judged_run, tmp_path)
    before = _snapshot(run)
    fake.mode, fake.fail_after = "flip", None
    result = rejudge_run(run, name="second")
    assert _snapshot(run / "rejudge" / "second") and _snapshot(run) != {}
    assert {k: v for k, v in _snapshot(run).items() if "rejudge" not in k} == before
    assert result.graded == result.total == 2 * LIMIT
    expected = _expected(run)
    got = {m.status.cell.key: (m.items, m.first, m.second, m.up, m.down) for m in result.cells}
    assert got == expected
    assert sum(v[3] for v in expected.values()) and sum(v[4] for v in expected.values())
    for m in result.cells:
        items, first, second, *_ = expected[m.status.cell.key]
        assert m.delta == pytest.approx(100 * (second - first) / items)
        assert m.unjudged == 0
    mean = sum(abs(m.delta or 0) for m in result.cells) / len(result.cells)
    assert result.mean_abs_movement == pytest.approx(mean)
    verbatim = next(m for m in result.cells if m.status.cell.variant == "verbatim")
    assert verbatim.attribution is not None
    assert verbatim.attribution[0] == verbatim.attribution[1]  # attribution is never flipped
    table = movement_table(result)
    row = table.rows[[m.status.cell.key for m in result.cells].index(verbatim.status.cell.key)]
    assert row[6:12] == [verbatim.items, verbatim.first_pct, verbatim.second_pct,
                         verbatim.delta, verbatim.up, verbatim.down]
    assert f"{mean:.1f} points over 2 cell(s)" in table.markdown()
    assert not result.left_out and "left out" not in table.markdown()
    assert table.csv().splitlines()[0].startswith("benchmark,conversation,variant")
    # The second set is a run folder: its report reads the second judge's grades.
    second = load_run(run / "rejudge" / "second")
    assert [s.status for s in second.statuses] == ["complete", "complete"]
    for key, records in second.records.items():
        firsts = {r.question_id: r for r in load_run(run).records[key]}
        for r in records:
            a = firsts[r.question_id].grades.judge_correct
            assert r.grades.judge_correct == (1 - (a or 0) if flipped(r.question) else a)
            assert r.answer == firsts[r.question_id].answer
    text, _ = write_report(run / "rejudge" / "second")
    assert "Table 1" in text
    # Run again: nothing left to grade, the same movement.
    requests = fake.requests
    again = rejudge_run(run, name="second")
    assert again.graded == 0 and fake.requests == requests
    assert [(m.items, m.up, m.down) for m in again.cells] == \
        [(m.items, m.up, m.down) for m in result.cells]


def test_a_set_graded_by_another_judge_is_refused(
        fake: FakeJudge, judged_run: Path, tmp_path: Path) -> None:
    run = _copy(judged_run, tmp_path)
    fake.mode, fake.fail_after = "same", None
    rejudge_run(run, name="second")
    with pytest.raises(ValueError, match="another judge"):
        rejudge_run(run, judge_model="openai-api/fakejudge/other", name="second")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    return env | {"COLUMNS": "200"} | extra


def _invoke(run: Path, *args: str) -> Result:
    return CliRunner().invoke(app, ["study", "rejudge", str(run), *args])


def test_a_provider_failing_mid_rejudge_gives_one_line_and_resumes(
        fake: FakeJudge, judged_run: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = _copy(judged_run, tmp_path)
    monkeypatch.setenv("MEMDIR_MODEL_TIMEOUT", "3")
    get_settings.cache_clear()
    try:
        fake.mode, fake.requests, fake.fail_after = "flip", 0, 5
        began = time.monotonic()
        failed = _invoke(run, "--out", "third")
        assert time.monotonic() - began < 60  # the call's time limit, not minutes
        fake.fail_after = None
        kept = list((run / "rejudge" / "third").rglob("records/*.json"))
        statuses = [json.loads(p.read_text())["status"]
                    for p in (run / "rejudge" / "third").rglob("status.json")]
        resumed = _invoke(run, "--out", "third")
    finally:
        get_settings.cache_clear()
    assert failed.exit_code == 1, failed.output
    errors = [line for line in failed.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "judge backend down" in errors[0], failed.output
    assert "are graded and kept" in errors[0] and "Traceback" not in failed.output
    assert "memdir study rejudge" in failed.output and "--out third" in failed.output
    assert kept and "failed" in statuses
    assert resumed.exit_code == 0, resumed.output
    assert "judge % first" in resumed.output and "mean absolute movement" in resumed.output
    graded_now = re.search(r"\((\d+) graded now, (\d+) in all", resumed.output)
    assert graded_now is not None  # each question is graded once: before the failure or now
    assert (int(graded_now.group(1)), int(graded_now.group(2))) == (2 * LIMIT - len(kept),
                                                                     2 * LIMIT)
    second = load_run(run / "rejudge" / "third")
    assert [s.status for s in second.statuses] == ["complete", "complete"]
    csv = (run / "rejudge" / "third" / "movement.csv").read_text()
    for key, (items, first, _, up, down) in _expected(run).items():
        variant = next(s.cell.variant for s in second.statuses if s.cell.key == key)
        line = next(x for x in csv.splitlines() if f",{variant}," in x)
        assert f",{items},{100 * first / items}," in line and f",{up},{down},0," in line


def _silent_server() -> socket.socket:
    """A loopback provider that takes requests and never answers them."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return server


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_exits_130_with_a_resume_line(judged_run: Path, tmp_path: Path) -> None:
    run = _copy(judged_run, tmp_path)
    server = _silent_server()
    port = server.getsockname()[1]
    env = _env(HANGJUDGE_BASE_URL=f"http://127.0.0.1:{port}/v1", HANGJUDGE_API_KEY="k")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "study", "rejudge", str(run),
         "--judge", "openai-api/hangjudge/judge"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (run / "rejudge" / "rejudge-openai-api-hangjudge-judge").exists():
            assert time.monotonic() < deadline, "the re-judging never started"
            time.sleep(0.2)
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        server.close()
    assert proc.returncode == 130, err
    assert "interrupted: the graded questions are kept" in err
    assert "study rejudge" in err and "--judge openai-api/hangjudge/judge" in err


def test_a_cell_the_run_did_not_complete_is_left_out_and_named(
        fake: FakeJudge, judged_run: Path, tmp_path: Path) -> None:
    run = _copy(judged_run, tmp_path)
    status_file = next(p for p in (run / "cells").glob("*/status.json") if "closed-book" in str(p))
    status = json.loads(status_file.read_text())
    status.update(status="failed", reason="interrupted; rerun to resume")
    status_file.write_text(json.dumps(status))
    fake.mode, fake.fail_after = "same", None
    result = rejudge_run(run, name="partial")
    assert result.left_out == [status_file.parent.name]
    assert [m.status.cell.variant for m in result.cells] == ["verbatim"]
    assert all(m.up == m.down == 0 for m in result.cells)  # the same judge, the same grades
    assert f"left out: 1 cell(s) the run did not complete ({status_file.parent.name})" in \
        movement_table(result).markdown()
    assert not (run / "rejudge" / "partial" / "cells" / status_file.parent.name).exists()
