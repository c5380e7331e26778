"""The report's compute bounds per cell and role, from hand-made step records.

Each figure is worked out by hand in the comments (docs/costs.md gives the formulas).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from skill_runs import write_cell

from memdir.agents import CallRecord, EpisodeRecord, Usage
from memdir.skills import Cell, StepRecord, build_report

MINI = "openai/gpt-5.4-mini"


def episode(role: str, *calls: Usage) -> EpisodeRecord:
    records = [CallRecord(role=role, round=i, model=MINI, prompt_hash="h", stop_reason="stop",
                          latency_s=0.1, usage=usage) for i, usage in enumerate(calls, 1)]
    return EpisodeRecord(role=role, model=MINI, prompt_name=role, prompt_hash="h",
                         max_rounds=5, calls=records)


# Task 0, execution, three calls (context c_r = uncached + cached + cache_write):
#   call 1: c=100 (100 uncached), o=10 of which 4 reasoning -> visible v=6
#   call 2: c=120 (20 uncached + 100 cached), o=5, v=5
#   call 3: c=130 (30 uncached + 90 cached + 10 written), o=8
#   ceiling  = (100 + 120 + 130) + (10 + 5 + 8)           = 350 + 23 = 373
#   unique   = 100 + max(0, 120-100-6) + max(0, 130-120-5) = 100 + 14 + 5 = 119
#   floor    = 119 + 23                                   = 142
#   measured = (100) + (20) + (30 + 10) + 23              = 183
# Task 0, curation, one call: c=50 uncached, o=10 -> ceiling = floor = measured = 60.
# Task 1, execution, one call: c=40 uncached, o=2 -> ceiling = floor = measured = 42.
# Task 1 has no retrieval and no curation.
TASK0_EXECUTION = episode(
    "execution",
    Usage(uncached_input=100, output=10, reasoning=4),
    Usage(uncached_input=20, cached_input=100, output=5),
    Usage(uncached_input=30, cached_input=90, cache_write=10, output=8),
)


def test_bounds_per_cell_and_role(tmp_path: Path) -> None:
    cell = Cell(protocol="full-chain", variant="curated_skills", execution=MINI,
                curator=MINI, retriever=MINI)
    steps = [
        StepRecord(position=0, task_id="a/t", family="heat", success=True, steps_used=3,
                   execution=TASK0_EXECUTION,
                   curation=episode("curator", Usage(uncached_input=50, output=10))),
        StepRecord(position=1, task_id="b/t", family="cool", success=False, steps_used=1,
                   execution=episode("execution", Usage(uncached_input=40, output=2))),
    ]
    write_cell(tmp_path, cell, steps)
    md, table = build_report(tmp_path)
    text = md.read_text(encoding="utf-8")
    # execution: ceiling 373 + 42 = 415, floor 142 + 42 = 184, measured 183 + 42 = 225;
    # realized (415 - 225) / (415 - 184) = 190 / 231 = 0.8225; ceiling / floor 415 / 184 = 2.255
    assert f"| {cell.key} | execution | 2 | 415 | 184 | 225 | 0.823 | 2.26 |" in text
    # retrieval never ran: all zero, no savings achievable, no ratio
    assert f"| {cell.key} | retrieval | 0 | 0 | 0 | 0 | — | — |" in text
    # curation: one single-call episode, ceiling = floor, so nothing could be saved
    assert f"| {cell.key} | curation | 1 | 60 | 60 | 60 | — | 1.00 |" in text
    # all roles: ceiling 475, floor 244, measured 285; realized 190 / 231; 475 / 244 = 1.947
    assert f"| {cell.key} | all | 3 | 475 | 244 | 285 | 0.823 | 1.95 |" in text
    rows = list(csv.DictReader(io.StringIO(table.read_text(encoding="utf-8"))))
    first = {k: rows[0][f"execution_{k}"] for k in ("ceiling", "floor", "measured")}
    assert first == {"ceiling": "373", "floor": "142", "measured": "183"}
    assert [rows[0][f"curation_{k}"] for k in ("ceiling", "floor", "measured")] == ["60"] * 3
    assert [rows[1][f"execution_{k}"] for k in ("ceiling", "floor", "measured")] == ["42"] * 3
    assert rows[1]["retrieval_ceiling"] == "0" and rows[1]["curation_measured"] == "0"
