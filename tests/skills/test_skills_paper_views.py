"""The skills report's paper views (Tables 17 and 18, Figures 11 and 12) from a real offline chain.

A full chain over one game of each family, played two ways by scripted model
roles (tests/skills/offline_chain.py): no store, and curated skills with a
scripted curator and the offline grep-reader as its retriever. Skipped where
alfworld or the games are absent.
"""

from __future__ import annotations

import asyncio
import csv
import io
from pathlib import Path

import pytest
from offline_chain import Curator, Executor
from skill_runs import alfworld_split

from memdir.agents import cell_bounds
from memdir.skills import (
    AlfworldEnv,
    AlfworldTask,
    RunConfig,
    build_report,
    list_tasks,
    load_run,
    run_cell,
)
from memdir.skills._figures import running_success, write_figures

STEPS = 10


def _one_per_family(tasks: list[AlfworldTask]) -> list[str]:
    chosen: dict[str, str] = {}
    for task in sorted(tasks, key=lambda t: t.task_id):
        chosen.setdefault(task.family, task.task_id)
    return list(chosen.values())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    split = alfworld_split()
    tasks = list_tasks(split)
    out = tmp_path_factory.mktemp("run")
    config = RunConfig(name="paper-views", data=split, output=out, max_steps=STEPS,
                       variants=["none", "curated_skills"],
                       task_ids=_one_per_family(tasks), curators=["mock/curator"],
                       retriever="memdir/grep-reader", executions=["mock/exec"])
    models = {"mock/exec": Executor().model(), "mock/curator": Curator().model()}
    env = AlfworldEnv(max_steps=STEPS, cache_dir=tmp_path_factory.mktemp("cache"))
    for cell in config.cells():
        asyncio.run(run_cell(config, cell, tasks, env, models))
    return out


def _section(text: str, title: str) -> list[str]:
    part = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line.startswith("| ")]


def test_tables_17_and_18_aggregate_the_execution_records(run: Path) -> None:
    md, table = build_report(run)
    text = md.read_text(encoding="utf-8")
    cells = {c.cell.key: c for c in load_run(run)}
    assert len(cells) == 2
    rows17 = _section(text, "Execution agent per task (paper Table 17)")
    rows18 = _section(text, "Execution agent compute per task (paper Table 18)")
    assert len(rows17) == len(rows18) == 2 + 2  # header, rule, one row per cell
    tasks = list(csv.DictReader(io.StringIO(table.read_text(encoding="utf-8"))))
    for key, report in cells.items():
        steps = report.steps
        assert len(steps) == 6 and all(s.execution is not None for s in steps)
        rounds = sum(s.rounds("execution") for s in steps) / 6
        [row17] = [r for r in rows17 if r.startswith(f"| {key} |")]
        assert row17.split(" | ")[3] == f"{rounds:.1f}"
        assert rounds == sum(int(r["execution_rounds"]) for r in tasks if r["cell"] == key) / 6
        bounds = cell_bounds([s.execution for s in steps if s.execution is not None])
        [row18] = [r for r in rows18 if r.startswith(f"| {key} |")]
        cols = row18.strip("| ").split(" | ")
        assert cols[2] == f"{bounds.first_context / 6:.1f}"
        assert cols[3] == f"{bounds.unique_prefill / 6:.1f}"
        assert cols[4] == f"{bounds.decode / 6:.1f}"
        assert cols[8] == f"{bounds.measured / bounds.floor:.2f}"
        assert bounds.floor < bounds.measured < bounds.ceiling  # the cache saved some prefill
    first_context = {k: float(r.strip("| ").split(" | ")[2]) for k in cells
                     for r in rows18 if r.startswith(f"| {k} |")}
    # guidance widens the first turn: the retriever's cited entries are served whole
    assert first_context["full-chain.curated_skills.cur-curator.exec-exec"] > first_context[
        "full-chain.none.exec-exec"]
    assert "curation_effort.png" in text and "running_success.png" in text


def test_figures_11_and_12_are_drawn_from_the_records(run: Path, tmp_path: Path) -> None:
    cells = load_run(run)
    figures = write_figures(cells, tmp_path, run)
    assert [p.name for p in figures.written] == ["curation_effort.png", "running_success.png",
                                                 "hierarchy.png", "compression.png"]
    assert figures.skipped == {}
    for path in figures.written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    curated = next(c for c in cells if c.cell.variant == "curated_skills")
    assert [s.rounds("curation") for s in curated.steps] == [3] * 6  # one new family each
    none = next(c for c in cells if c.cell.variant == "none")
    assert running_success(none.steps, none.steps[0].family) in ([0.0], [1.0])
    # without a none cell there is nothing to difference against, and the report says so
    alone = write_figures([curated], tmp_path / "alone", run)
    assert alone.skipped["running_success.png"].startswith("needs a full-chain memory cell")


def test_figure_9_measures_the_chain_store_s_own_snapshots(run: Path) -> None:
    from memdir.metrics import measure_store
    from memdir.skills._growth_figures import _trajectory
    from memdir.store import Store

    curated = next(c for c in load_run(run) if c.cell.variant == "curated_skills")
    found = _trajectory(curated, run)
    assert found is not None
    positions, depth, b1 = found
    assert positions == [float(p) for p in range(1, len(curated.steps) + 1)]  # one per task
    final = measure_store(Store(run / curated.cell.key / "full" / "store"))
    assert depth[-1] == pytest.approx(final.shape.mean_leaf_depth)
    assert final.taxonomy.b1_distinguishability is not None
    assert b1[-1] == pytest.approx(final.taxonomy.b1_distinguishability)


def test_table_8_counts_each_chain_s_final_library_from_its_store(run: Path) -> None:
    from memdir.metrics import measure_store
    from memdir.store import Store, parse_file

    build_report(run)
    rows = _section((run / "report.md").read_text(encoding="utf-8"),
                    "Final library per chain (paper Table 8)")
    body = [[c.strip() for c in line.strip("|").split("|")] for line in rows[2:]]
    by_cell = {row[0]: row for row in body}
    report = {r.cell.key: r for r in load_run(run)}
    curated = next(k for k in report if "curated_skills" in k)
    chain, steps = next(iter(report[curated].chains.items()))
    store = Store(run / curated / chain / "store")
    headers = [parse_file(store.read(p), "entry").frontmatter for p in store.files()]
    kinds = [(h.metadata or {}).get("type") if h else None for h in headers]
    shape = measure_store(store).shape
    calls = sum(s.curation.tool_call_count for s in steps if s.curation is not None)
    row = by_cell[curated]
    assert row[1] == chain and int(row[2]) == len(steps)
    assert (int(row[3]), int(row[4]), int(row[5])) == (shape.files, shape.folders,
                                                       shape.sections)
    assert (int(row[7]), int(row[8])) == (kinds.count("skill"), kinds.count("note"))
    assert int(row[9]) == calls and calls > 0
    none_cell = next(k for k in report if k.startswith("full-chain.none") or ".none." in k)
    assert none_cell not in by_cell  # no store, no library row
