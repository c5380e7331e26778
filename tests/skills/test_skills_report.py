"""The report prices each role from hand-made step records (no game, no model)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from skill_runs import write_cell

from memdir.agents import CallRecord, EpisodeRecord, Usage
from memdir.skills import Cell, StepRecord, build_report

MINI = "openai/gpt-5.4-mini"


def episode(role: str, model: str, uncached: int, cached: int, output: int) -> EpisodeRecord:
    call = CallRecord(role=role, round=1, model=model, prompt_hash="h", stop_reason="stop",
                      latency_s=0.1, usage=Usage(uncached_input=uncached, cached_input=cached,
                                                 output=output))
    return EpisodeRecord(role=role, model=model, prompt_name=role, prompt_hash="h",
                         max_rounds=5, calls=[call])


def test_costs_per_role_and_per_solved_task(tmp_path: Path) -> None:
    cell = Cell(protocol="full-chain", variant="curated_skills_mem_gs", execution=MINI,
                curator=MINI, retriever=MINI)
    steps = [
        StepRecord(position=0, task_id="a/t", family="heat", success=True, steps_used=9,
                   execution=episode("execution", MINI, 1_000_000, 0, 0),
                   curation=episode("curator", MINI, 0, 1_000_000, 1_000_000),
                   store_files=1, store_bytes=300),
        StepRecord(position=1, task_id="b/t", family="cool", success=False, steps_used=50,
                   retrieval=episode("retriever", MINI, 2_000_000, 0, 0),
                   execution=episode("execution", MINI, 0, 0, 0),
                   store_files=2, store_bytes=700, gate_refusals=["/memories/x.md: no"]),
    ]
    write_cell(tmp_path, cell, steps)
    md, table = build_report(tmp_path)
    text = md.read_text(encoding="utf-8")
    # retrieval 2 M uncached * 0.75 = 1.50; execution 1 M * 0.75 = 0.75;
    # curation 1 M cached * 0.075 + 1 M output * 4.50 = 4.575; one solved task
    # Table 16: build, search, execution, deployment, execution's share, per solved task
    assert (f"| {cell.key} | {MINI} | 1 | $4.5750 | $1.5000 | $0.7500 | $2.2500 | 33.3 | "
            "$2.2500 | $4.5750 |") in text
    # Table 15: tasks, solved, micro %, then per family in FAMILIES' order (cool, heat)
    assert f"| {cell.key} | 2 | 1 | 50.0 | 0.0 | 100.0 |" in text
    # Table 5: one row per set-up, per execution tier its tasks, rate and cents per solved task
    assert ("| full-chain | curated_skills_mem_gs | openai/gpt-5.4-mini | center | 2 | 50.0 | "
            "225.0 |") in text
    assert f"| {cell.key} | full | 2 | 1/1/2/2 | 700 | 0 | 0 | 1 |" in text
    rows = list(csv.DictReader(io.StringIO(table.read_text(encoding="utf-8"))))
    assert [r["execution_rounds"] for r in rows] == ["1", "1"]
    assert rows[0]["curation_cached_input"] == "1000000" and rows[1]["gate_refusals"] == "1"


def test_an_unpriced_model_makes_the_cost_unknown(tmp_path: Path) -> None:
    cell = Cell(protocol="full-chain", variant="none", execution="someone/unpriced")
    step = StepRecord(position=0, task_id="a/t", family="heat", success=True, steps_used=3,
                      execution=episode("execution", "someone/unpriced", 10, 0, 1))
    write_cell(tmp_path, cell, [step])
    text = build_report(tmp_path)[0].read_text(encoding="utf-8")
    assert f"| {cell.key} | someone/unpriced | 1 | $0.0000 | $0.0000 | — | — | — | — |" in text


def test_the_execution_tiers_are_priced_so_table16_shows_execution_cost(tmp_path: Path) -> None:
    for model in ("openai/gpt-4.1", "openai/gpt-4.1-mini"):
        cell = Cell(protocol="three-chain", variant="none", execution=model)
        step = StepRecord(position=0, task_id="a/t", family="heat", success=True, steps_used=3,
                          execution=episode("execution", model, 1_000_000, 1_000_000, 100_000))
        write_cell(tmp_path, cell, [step])
    text = build_report(tmp_path)[0].read_text(encoding="utf-8")
    # gpt-4.1: 2.00 + 0.50 + 0.1 * 8.00; gpt-4.1-mini: 0.40 + 0.10 + 0.1 * 1.60
    assert ("| three-chain.none.exec-gpt-4_1 | openai/gpt-4.1 | 1 | $0.0000 | $0.0000 "
            "| $3.3000 |") in text
    assert ("| three-chain.none.exec-gpt-4_1-mini | openai/gpt-4.1-mini | 1 | $0.0000 | $0.0000 "
            "| $0.6600 |") in text
    # Table 5: one row for the no-store set-up, a column group per execution tier
    assert ("| three-chain | none | — | center | 1 | 100.0 | 330.0 | 1 | 100.0 | 66.0 |") in text


def test_a_folder_without_cells_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no cell"):
        build_report(tmp_path)
