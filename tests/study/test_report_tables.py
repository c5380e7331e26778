"""The report's paper tables (1, 3, 4, 6, 9, 10, 11) and figures, checked against the records.

A run folder is written here from the record types themselves: LoCoMo conv-50's
curated store built by two builder models and under three harnesses, each cell
reading its own store, with judged questions some of whose gold is defective.
Every table row is compared with the figures those records hold. Then the
shipped offline smoke config runs on the real data (first questions only) and
its tables are checked against its records and its stores measured live.
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

import pytest

from memdir.agents import CallRecord, EpisodeRecord, ToolCallRecord, Usage
from memdir.builders import BuildRecord, UnitRecord
from memdir.metrics import measure_store
from memdir.runs import Table, write_manifest, write_record
from memdir.store import Store
from memdir.study import (
    Cell,
    CellStatus,
    Grades,
    QuestionRecord,
    StoreInfo,
    load_config,
    load_run,
    run_study,
)
from memdir.study._config import JudgeSettings
from memdir.study._grading import judge_pin
from memdir.study._manifest import StudyManifest
from memdir.study._report import build_tables, write_report

from .helpers import SHARED_DATA

SEARCHER = "openai/gpt-5.4-mini"
BUILDERS = ("openai/gpt-5.4-nano", "openai/gpt-5.4-mini")
HARNESSES = ("center", "center+bm25", "shell")
JUDGE_PIN = judge_pin(JudgeSettings(model="openai/gpt-5.4-mini", max_tokens=600))

# (question, f1, judge, defective gold): F1 and the judge disagree on purpose
QUESTIONS = [("q1", 0.2, 1, False), ("q2", 0.9, 0, False), ("q3", 0.6, 1, True),
             ("q4", 0.1, 0, True), ("q5", 0.8, 1, False)]


def _episode(role: str, model: str, rounds: int, tools_per_round: int, tokens: int
             ) -> EpisodeRecord:
    calls = [CallRecord(role=role, round=i + 1, model=model, prompt_hash="h",
                        stop_reason="tool_calls", latency_s=0.1,
                        usage=Usage(uncached_input=tokens, cached_input=tokens // 2,
                                    output=tokens // 10),
                        tool_calls=[ToolCallRecord(id=f"{i}-{j}", name="view",
                                                   arguments={"path": "/memories"},
                                                   is_error=False, result="ok")
                                    for j in range(tools_per_round)])
             for i in range(rounds)]
    return EpisodeRecord(role=role, model=model, prompt_name="p", prompt_hash="h",
                         max_rounds=20, calls=calls)


def _cell(builder: str, harness: str) -> Cell:
    return Cell(benchmark="locomo", tier=None, conversation="conv-50", variant="curated",
                builder_model=builder, search_model=SEARCHER, harness=harness)


def _store_key(builder: str, harness: str) -> str:
    return f"{_cell(builder, harness).store_key}__{harness}".replace("+", "-")


def _files(builder: str, harness: str) -> int:
    """A different file count for every store, so a row that reads the wrong one shows."""
    return 10 * (1 + BUILDERS.index(builder)) + HARNESSES.index(harness)


def _store(builder: str, harness: str) -> StoreInfo:
    chunks = 3 + HARNESSES.index(harness)
    units = [UnitRecord.from_episode("chunk", i + 1, f"chunk {i + 1}",
                                     _episode("management", builder, 2, 3, 1000), cost=0.01)
             for i in range(chunks)]
    build = BuildRecord(variant="curated", conversation_id="conv-50", benchmark="locomo",
                        files=[f"/memories/f{i}.md" for i in range(_files(builder, harness))],
                        bytes=5000, builder_model=builder, units=units,
                        model_calls=2 * chunks, tool_calls=6 * chunks, cost=0.01 * chunks,
                        input_tokens=1500 * 2 * chunks, output_tokens=100 * 2 * chunks,
                        usage=Usage(uncached_input=2000 * chunks, cached_input=1000 * chunks,
                                    output=200 * chunks))
    profile = {"folders": 2, "files": _files(builder, harness), "sections": 7, "bytes": 5000,
               "units": 7, "leaves": 7, "mean_leaf_depth": 2.5, "max_depth": 4,
               "mean_fanout": 3.0, "size_gini": 0.25, "xrefs": 5, "dangling_count": 1,
               "b1_distinguishability": 0.81, "b1_min": 0.4, "b2_cohesion": 1.7,
               "b3_leakage": 0.1, "b4_spearman": 0.2, "units_considered": 6}
    return StoreInfo(key=_store_key(builder, harness), variant="curated", path=None,
                     build=build, build_usage=build.usage, build_cost=build.cost,
                     profile=profile)


def _record(cell: Cell, order: int, qid: str, f1: float, judge: int, defective: bool
            ) -> QuestionRecord:
    return QuestionRecord(cell=cell.key, question_id=qid, order=order, category=1,
                          category_name="multi-hop", question="?", gold="g",
                          defective_gold=defective, answer="a",
                          grades=Grades(f1=f1, judge_correct=judge,
                                        attribution={"citation_correctness": 1.0}),
                          episode=_episode("search", SEARCHER, 3, 2, 400))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("paper-run")
    cells = []
    for builder in BUILDERS:
        for harness in HARNESSES:
            cell = _cell(builder, harness)
            cells.append(cell)
            folder = root / "cells" / cell.key
            for i, (qid, f1, judge, defective) in enumerate(QUESTIONS, 1):
                write_record(folder / "records" / f"{qid}.json",
                             _record(cell, i, qid, f1, judge, defective))
            write_record(folder / "status.json",
                         CellStatus(cell=cell, status="complete", questions=len(QUESTIONS),
                                    answered=len(QUESTIONS),
                                    store=_store_key(builder, harness)))
            write_record(root / "stores" / f"{_store_key(builder, harness)}.json",
                         _store(builder, harness))
    config = {"name": "paper", "benchmarks": [{"name": "locomo", "conversations": ["conv-50"],
                                               "tiers": ["32k"], "limit": None}],
              "variants": ["curated"],
              "search": {"models": [SEARCHER], "effort": "low", "max_tokens": 4000,
                         "max_rounds": 12},
              "management": {"models": list(BUILDERS), "effort": "medium",
                             "max_tokens": 8000, "max_rounds": 30},
              "judge": {"model": "openai/gpt-5.4-mini", "effort": None, "max_tokens": 600,
                        "attribution": True, "limit": None},
              "harnesses": list(HARNESSES), "chunk_tokens": 600, "reorganize_passes": 5}
    write_manifest(root, StudyManifest(config=config, seed=7, cells=[c.key for c in cells],
                                       prompt_hashes={"manage-curated": "a" * 64},
                                       toolset_digests={"write": "b" * 16},
                                       datasets={"/data/locomo/locomo10.json": "c" * 64},
                                       versions={"memdir": "0.1.0"}, judge=JUDGE_PIN))
    return root


def _tables(run_dir: Path) -> dict[str, Table]:
    return {t.name: t for t in build_tables(load_run(run_dir))}


def _rows(table: Table) -> list[dict[str, object]]:
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def test_table1_without_defective_gold_comes_from_the_judge(run_dir: Path) -> None:
    table = _tables(run_dir)["table1-locomo"]
    assert {"token F1", "token F1 w/o defective", "judge %", "judge % w/o defective"
            } <= set(table.columns)
    rows = _rows(table)
    assert len(rows) == len(BUILDERS) * len(HARNESSES)
    for row in rows:
        assert row["n"] == 5 and row["defective"] == 2 and row["judged"] == 5
        assert row["token F1"] == pytest.approx(100 * (0.2 + 0.9 + 0.6 + 0.1 + 0.8) / 5)
        assert row["token F1 w/o defective"] == pytest.approx(100 * (0.2 + 0.9 + 0.8) / 3)
        assert row["judge %"] == pytest.approx(60.0)
        # q1, q2, q5 are kept: judged 1, 0, 1 (F1 would give 63.3 instead)
        assert row["judge % w/o defective"] == pytest.approx(200 / 3)
        assert row["attribution %"] == pytest.approx(100.0)


def test_table3_gives_build_effort_per_chunk(run_dir: Path) -> None:
    rows = {r["store"]: r for r in _rows(_tables(run_dir)["table3"])}
    assert set(rows) == {_store_key(b, h) for b in BUILDERS for h in HARNESSES}
    for builder in BUILDERS:
        for i, harness in enumerate(HARNESSES):
            row = rows[_store_key(builder, harness)]
            chunks = 3 + i
            assert (row["builder"], row["harness"]) == (builder, harness)
            assert row["files"] == _files(builder, harness)
            assert row["KB"] == pytest.approx(5000 / 1024)
            assert (row["folders"], row["sections"], row["xrefs"]) == (2, 7, 5)
            assert (row["build units"], row["build unit kind"]) == (chunks, "chunk")
            assert row["build rounds"] == 2 * chunks and row["build rounds/unit"] == 2.0
            assert row["build tool calls"] == 6 * chunks and row["build tool calls/unit"] == 6
            assert row["build $"] == pytest.approx(0.01 * chunks)


def test_table4_has_both_panels_for_every_store(run_dir: Path) -> None:
    table = _tables(run_dir)["table4"]
    rows = {r["store"]: r for r in _rows(table)}
    assert len(rows) == len(BUILDERS) * len(HARNESSES)
    row = rows[_store_key(BUILDERS[0], "shell")]
    assert row["files"] == _files(BUILDERS[0], "shell") and row["max depth"] == 4
    assert (row["mean fanout"], row["size gini"], row["dangling"]) == (3.0, 0.25, 1)
    assert (row["B1 distinguishability"], row["B1 min"], row["B2 cohesion"]) == (0.81, 0.4, 1.7)
    assert (row["B3 leakage"], row["B4 spearman"], row["B units"]) == (0.1, 0.2, 6)


def test_table6_is_the_builder_ladder(run_dir: Path) -> None:
    rows = _rows(_tables(run_dir)["table6"])
    # one group per harness (same searcher), each with both builders
    assert [(r["harness"], r["builder"]) for r in rows] == [
        (h, b) for h in HARNESSES for b in sorted(BUILDERS)]
    for row in rows:
        builder, harness = str(row["builder"]), str(row["harness"])
        assert row["files"] == _files(builder, harness)
        assert row["build tool calls"] == 6 * (3 + HARNESSES.index(harness))
        assert row["n"] == 5 and row["judge %"] == pytest.approx(60.0)
        assert row["cents/query"] is not None and row["cents/query"] > 0


def test_tables9_and_10_give_one_row_per_harness_reading_its_own_store(run_dir: Path) -> None:
    tables = _tables(run_dir)
    quality, cost = _rows(tables["table9"]), _rows(tables["table10"])
    for rows in (quality, cost):
        assert [(r["builder"], r["harness"]) for r in rows] == [
            (b, h) for b in sorted(BUILDERS) for h in HARNESSES]
    assert all(r["n"] == 5 and r["judge %"] == pytest.approx(60.0) for r in quality)
    for row in cost:
        builder, harness = str(row["builder"]), str(row["harness"])
        assert row["files"] == _files(builder, harness)
        assert row["build units"] == 3 + HARNESSES.index(harness)
        assert (row["rounds/query"], row["tool calls/query"]) == (3, 6)
        assert row["in tok/query"] == 3 * (400 + 200) and row["out tok/query"] == 3 * 40
        # 3 calls of 400 uncached, 200 cached, 40 out at the listed mini rates
        cents = 100 * 3 * (400 * 0.75 + 200 * 0.075 + 40 * 4.5) / 1e6
        assert row["cents/query"] == pytest.approx(cents)


def test_table11_renders_the_configuration_of_record(run_dir: Path) -> None:
    table = _tables(run_dir)["table11"]
    rows = {(str(r[0]), str(r[1])): r[2] for r in table.rows}
    # what the episode records show each role ran with, per model
    assert [r[2] for r in table.rows if r[0] == "as run: search"] == [
        f"{SEARCHER}: round budget 20, output cap none, effort none, prompt p"]
    assert [r[2] for r in table.rows if r[0] == "as run: management"] == [
        f"{b}: round budget 20, output cap none, effort none, prompt p" for b in sorted(BUILDERS)]
    assert rows[("search agent", "models")] == SEARCHER
    assert rows[("search agent", "effort")] == "low"
    assert rows[("search agent", "output cap (tokens)")] == "4000"
    assert rows[("search agent", "round budget")] == "12"
    assert rows[("management agent (builders)", "models")] == ", ".join(BUILDERS)
    assert rows[("management agent (builders)", "round budget")] == "30"
    assert rows[("judge", "model")] == "openai/gpt-5.4-mini"
    assert rows[("harness", "harnesses")] == "center, center+bm25, shell"
    assert rows[("chunking", "chunk budget (tokens)")] == "600"
    assert rows[("run", "seed")] == "7" and rows[("run", "cells")] == "6"
    assert rows[("benchmark", "locomo")] == "conversations conv-50; every question"
    assert rows[("data file", "/data/locomo/locomo10.json")] == "c" * 64
    assert rows[("prompt", "manage-curated")] == "a" * 64
    # the judge as the manifest pins it: its hash and each template's
    assert JUDGE_PIN is not None and JUDGE_PIN.templates
    assert rows[("judge pin", "hash")] == JUDGE_PIN.hash
    for name, digest in JUDGE_PIN.templates.items():
        assert rows[("judge pin", f"template {name}")] == digest


def test_report_writes_and_links_the_figures(run_dir: Path) -> None:
    text, written = write_report(run_dir)
    pictures = [p for p in written if p.suffix == ".png"]
    assert [p.name for p in pictures] == ["fig-correctness-locomo.png",
                                          "fig-search-cost-locomo.png",
                                          "fig-cost-vs-correctness-locomo.png"]
    for picture in pictures:
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 5000
        assert f"]({picture.name})" in text
    # priced records: the cost axis is cents per query
    assert "bootstrap" in text
    _, files = write_report(run_dir, "csv")
    by_name = {p.name: p for p in files}
    for name in ("table1-locomo.csv", "table3.csv", "table4.csv", "table6.csv", "table9.csv",
                 "table10.csv", "table11.csv"):
        assert name in by_name
    rows = list(csv.DictReader(io.StringIO(by_name["table9.csv"].read_text())))
    assert [r["harness"] for r in rows] == list(HARNESSES) * 2


# --- the shipped offline smoke config, run on the real data -------------------------------

SMOKE_LIMIT = 15


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """configs/offline-smoke.yaml on ../shared/data, the first questions of each cell."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    shipped = load_config(Path(__file__).resolve().parents[2] / "configs" / "offline-smoke.yaml")
    config = shipped.model_copy(update={
        "data_dir": SHARED_DATA,
        "benchmarks": [b.model_copy(update={"limit": SMOKE_LIMIT}) for b in shipped.benchmarks]})
    out = tmp_path_factory.mktemp("smoke")
    assert all(s.status == "complete" for s in run_study(config, out))
    return out


def test_offline_tables_match_the_records(smoke_dir: Path) -> None:
    run = load_run(smoke_dir)
    tables = _tables(smoke_dir)
    for key in ("locomo", "realtalk"):
        rows = {r["variant"]: r for r in _rows(tables[f"table1-{key}"])}
        assert set(rows) == {"closed-book", "chunk", "verbatim"}
        for status in (s for s in run.complete if s.cell.dataset_key == key):
            records = run.records[status.cell.key]
            row = rows[status.cell.variant]
            assert row["n"] == len(records) == SMOKE_LIMIT
            f1s = [r.grades.f1 or 0.0 for r in records]
            assert row["token F1"] == pytest.approx(100 * sum(f1s) / len(f1s))
            assert row["judged"] == 0 and row["judge % w/o defective"] is None
    shapes = {r["store"]: r for r in _rows(tables["table4"])}
    # every store a cell read, closed-book aside (it reads none)
    assert set(shapes) == {k for k, info in run.stores.items() if info.variant != "closed-book"}
    for key, row in shapes.items():
        path = run.stores[key].path
        assert path is not None
        live = measure_store(Store(path), seed=0)
        assert row["files"] == live.shape.files and row["sections"] == live.shape.sections
        assert row["max depth"] == live.shape.max_depth
        assert row["B1 distinguishability"] == pytest.approx(
            live.taxonomy.b1_distinguishability)
        assert row["B3 leakage"] == pytest.approx(live.taxonomy.b3_leakage)
    stores = {r["store"]: r for r in _rows(tables["table3"])}
    # conv-50's verbatim dump: 30 session files, 104,492 bytes (docs/datasets.md)
    verbatim = stores["locomo__conv-50__verbatim__none"]
    assert (verbatim["files"], verbatim["bytes"], verbatim["build units"]) == (30, 104492, None)
    config = {(str(r[0]), str(r[1])): r[2] for r in tables["table11"].rows}
    locomo = next(p for p in SHARED_DATA.glob("locomo/*.json") if p.name == "locomo10.json")
    assert config[("data file", str(locomo))] == hashlib.sha256(locomo.read_bytes()).hexdigest()
    assert config[("search agent", "models")] == "memdir/grep-reader"
    assert "one harness in this run: center" in tables["table9"].markdown()
    # A table left empty on a complete run says why, never "(no complete cells)".
    for name, table in tables.items():
        if not table.rows and name != "failed":
            assert "no complete cells" not in table.markdown(), table.markdown()
    assert "nothing to pool" in tables["pooled-sign-tests"].markdown()


def test_offline_report_draws_every_figure(smoke_dir: Path) -> None:
    text, written = write_report(smoke_dir)
    pictures = {p.name: p for p in written if p.suffix == ".png"}
    assert set(pictures) == {f"fig-{kind}-{key}.png" for key in ("locomo", "realtalk")
                             for kind in ("correctness", "search-cost", "cost-vs-correctness")}
    assert all(p.stat().st_size > 5000 for p in pictures.values())
    assert all(f"]({name})" in text for name in pictures)
