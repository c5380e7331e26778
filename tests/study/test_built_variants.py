"""Model-built variants in a study: built by a scripted builder, searched offline, reported.

The foldered, reorganized (preserve) and curated stores of LoCoMo conv-50 are built by
one scripted ``mockllm/model`` that answers each role from its messages; the offline
grep-reader answers two questions per cell. A second run into another folder with the
same build cache reuses every store without a model call.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import Model, ModelOutput, get_model

from memdir.conversation import SESSION_CHUNK_TOKENS
from memdir.store import Frontmatter, render_file
from memdir.study import StudyConfig, load_run, run_study, write_report
from scripted import calls, text

from .helpers import OFFLINE, SHARED_DATA, model_events

VARIANTS = ["foldered", "reorganized-preserve", "curated"]
PRICES = "mockllm/model:\n  input: 1.0\n  cached_input: 0.1\n  output: 2.0\n"


def _note(name: str, body: str) -> str:
    return render_file(Frontmatter(name=name, description=f"Notes: {name}"), body)


class Builder:
    """Every builder role at once: foldering, reorganizing and curating, by the messages."""

    def __init__(self, fail_at_session: int | None = None) -> None:
        self.calls: Counter[str] = Counter()
        self.fail_at_session = fail_at_session

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any
                 ) -> ModelOutput:
        user = str(input[1].text)
        first = not any(m.role == "assistant" for m in input)
        if "create" not in {t.name for t in tools}:
            self.calls["foldering"] += 1
            if not first:
                return text("early: sessions 1-2; later: session 3")
            return calls(*(("rename", {"old_path": f"/memories/session-0{n}.md",
                                       "new_path": f"/memories/{where}/session-0{n}.md"})
                           for n, where in ((1, "early"), (2, "early"), (3, "later"))))
        if "reorganization pass" in user:
            self.calls["reorganize"] += 1
            if first and "pass 1 of" in user:
                return calls(("create", {"path": "/memories/people/overview.md",
                                         "file_text": _note("overview", "# People\n")}))
            return text("The layout is final.")
        self.calls["curate"] += 1
        session = re.search(r"^# Session (\d+)", user, re.MULTILINE)
        assert session is not None
        if not first:
            if int(session.group(1)) == self.fail_at_session:
                raise RuntimeError("provider unreachable (scripted)")
            return text("filed")
        turn = re.search(r"^(\[S\d+T\d+\] .*)$", user, re.MULTILINE)
        body = f"# Session {session.group(1)}\n\n- {turn.group(1) if turn else ''}\n"
        return calls(("create", {"path": f"/memories/sessions/s{session.group(1)}.md",
                                 "file_text": _note(f"s{session.group(1)}", body)}))

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)


def _config(tmp: Path, variants: list[str] = VARIANTS) -> StudyConfig:
    prices = tmp / "prices.yaml"
    prices.write_text(PRICES)
    return StudyConfig.model_validate({
        "name": "built", "data_dir": str(SHARED_DATA),
        "benchmarks": [{"name": "locomo", "conversations": ["conv-50"], "limit": 2}],
        "variants": variants, "search": {"models": [OFFLINE]},
        "management": {"models": ["mockllm/model"], "max_rounds": 4},
        "reorganize_passes": 3, "prices": str(prices), "build_cache": str(tmp / "cache"),
        # one chunk per session: chunk n is session n, and the curated build stays short
        "chunk_tokens": SESSION_CHUNK_TOKENS,
    })


@pytest.fixture(scope="module")
def built_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Builder, StudyConfig]:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    tmp = tmp_path_factory.mktemp("built")
    config = _config(tmp)
    builder = Builder()
    statuses = run_study(config, tmp / "run", models={"mockllm/model": builder.model()})
    assert [(s.cell.variant, s.status, s.answered) for s in statuses] == [
        (v, "complete", 2) for v in VARIANTS], [s.reason for s in statuses]
    return tmp, builder, config


def test_each_built_store_records_its_build(built_run: tuple[Path, Builder, StudyConfig]
                                            ) -> None:
    tmp, builder, _ = built_run
    run = load_run(tmp / "run")
    stores = {info.variant: info for info in run.stores.values()}
    assert set(stores) == set(VARIANTS)
    curated = stores["curated"].build
    assert curated is not None
    chunks = len(curated.units)
    assert builder.calls == {"foldering": 2, "reorganize": 3, "curate": 2 * chunks}
    for variant, info in stores.items():
        build = info.build
        assert build is not None
        assert info.build_usage is not None and info.build_usage.uncached_input > 0
        calls_made = {"foldered": 2, "reorganized-preserve": 3, "curated": 2 * chunks}[variant]
        assert build.model_calls == calls_made
        # 100 input and 10 output tokens a call, at $1 and $2 per million
        assert info.build_cost == pytest.approx(calls_made * 120e-6)
        assert build.builder_model == "mockllm/model" and not build.reused
        # each unit's figures derive from the episode it keeps
        assert sum(u.rounds for u in build.units) == calls_made
        assert all(u.episode is not None and u.copied is None for u in build.units)
        assert Path(info.path or "").is_relative_to(tmp / "cache")
    foldered = stores["foldered"].build
    assert foldered is not None
    assert [m.new for m in foldered.moves] == [
        "/memories/early/session-01.md", "/memories/early/session-02.md",
        "/memories/later/session-03.md"]
    reorganized = stores["reorganized-preserve"].build
    assert reorganized is not None
    assert [u.changed for u in reorganized.units] == [True, False]
    assert stores["foldered"].profile["folders"] == 2


def test_the_manifest_pins_the_builder_prompts_and_tools(
        built_run: tuple[Path, Builder, StudyConfig]) -> None:
    tmp, _, _ = built_run
    manifest = json.loads((tmp / "run" / "manifest.json").read_text())
    assert {"foldering", "reorganize-preserve", "reorganize-preserve-blocks",
            "management-conversation"} <= set(manifest["prompt_hashes"])
    assert {"folder", "write", "read"} <= set(manifest["toolset_digests"])
    run = load_run(tmp / "run")
    builds = {i.variant: i.build for i in run.stores.values() if i.build is not None}
    assert builds["curated"].prompt_hash == manifest["prompt_hashes"][
        "management-conversation"]
    assert builds["foldered"].toolset_digest == manifest["toolset_digests"]["folder"]


def test_table3_shows_build_tokens_and_dollars(built_run: tuple[Path, Builder, StudyConfig]
                                               ) -> None:
    tmp, _, _ = built_run
    text_md, _ = write_report(tmp / "run")
    assert "build $" in text_md
    _, files = write_report(tmp / "run", "csv")
    table = next(p for p in files if p.name == "table3.csv")
    rows = {r["variant"]: r for r in csv.DictReader(io.StringIO(table.read_text()))}
    assert set(rows) == set(VARIANTS)
    assert float(rows["foldered"]["build $"]) == pytest.approx(2 * 120e-6)
    assert int(rows["reorganized-preserve"]["build in tok"]) == 300
    assert int(rows["reorganized-preserve"]["build out tok"]) == 30
    # every builder model call is kept, so each build gets its compute bounds
    for row in rows.values():
        assert float(row["build ceiling"]) >= float(row["build floor"]) > 0


def test_a_second_run_reuses_the_cached_builds(built_run: tuple[Path, Builder, StudyConfig]
                                               ) -> None:
    tmp, _, config = built_run
    again = Builder()
    statuses = run_study(config, tmp / "rerun", models={"mockllm/model": again.model()})
    assert all(s.status == "complete" for s in statuses)
    assert sum(again.calls.values()) == 0
    run = load_run(tmp / "rerun")
    assert all(info.build is not None and info.build.reused for info in run.stores.values())
    assert all(info.build_cost is not None and info.build_cost > 0
               for info in run.stores.values())


def test_a_failed_build_fails_its_cell_and_the_rerun_resumes_it(tmp_path: Path) -> None:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    config = _config(tmp_path, ["curated"])
    failing = Builder(fail_at_session=3)
    (status,) = run_study(config, tmp_path / "run", models={"mockllm/model": failing.model()})
    assert status.status == "failed" and status.answered == 0
    assert "StoreBuildFailed" in (status.reason or "")
    assert "chunk 3" in (status.reason or "") and "provider unreachable" in (status.reason or "")
    assert failing.calls["curate"] == 2 * 2 + 2
    working = Builder()
    (status,) = run_study(config, tmp_path / "run", models={"mockllm/model": working.model()})
    assert status.status == "complete" and status.answered == 2
    record = load_run(tmp_path / "run").stores[status.cell.store_key].build
    assert record is not None
    chunks = len(record.units)
    assert working.calls["curate"] == 2 * (chunks - 2)  # chunks 1 and 2 were not redone
    assert [u.index for u in record.units] == list(range(1, chunks + 1))


def test_each_build_is_a_transcript_in_the_runs_logs(built_run: tuple[Path, Builder, StudyConfig]
                                                     ) -> None:
    tmp, builder, _ = built_run
    logs = {}
    for path in (tmp / "run" / "logs").glob("*.eval"):
        log = read_eval_log(str(path))
        if log.eval.task.startswith("build__"):
            logs[log.eval.metadata["variant"]] = log  # type: ignore[index]
    assert set(logs) == set(VARIANTS)
    run = load_run(tmp / "run")
    for info in run.stores.values():
        log = logs[info.variant]
        assert log.status == "success" and log.samples is not None
        [sample] = log.samples
        assert info.build is not None
        # every model call the build recorded is in the build's transcript
        assert len(model_events(sample, "mockllm/model")) == info.build.model_calls


def test_figure5_checkpoints_every_model_built_store(built_run: tuple[Path, Builder, StudyConfig]
                                                     ) -> None:
    from memdir.metrics import measure_store
    from memdir.store import Store
    from memdir.study._growth_figure import _series

    tmp, _, _ = built_run
    run = load_run(tmp / "run")
    series = dict(_series(run))
    built = {k for k, info in run.stores.items() if info.build and info.build.units}
    assert set(series) == built and len(built) == len(VARIANTS)
    for key, columns in series.items():
        info = run.stores[key]
        assert info.path is not None and info.build is not None
        # one checkpoint per snapshot of the build, the last one the store as it stands
        assert len(columns["step"]) >= 2
        final = measure_store(Store(info.path)).shape
        assert columns["files"][-1] == final.files
        assert columns["sections"][-1] == final.sections
        assert columns["bytes"][-1] == pytest.approx(final.bytes / 1024)
    text_md, written = write_report(tmp / "run")
    figure = next(p for p in written if p.name == "fig5-store-growth.png")
    assert figure.stat().st_size > 5000 and "](fig5-store-growth.png)" in text_md
