"""A real chain with the fixed-rule episode log and the expert: snapshots, leak-free, resume.

Skipped where alfworld or the games are absent. Three quick games of one family,
so retrieval has earlier episodes of the same family to serve.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from skill_runs import alfworld_split
from typer.testing import CliRunner

from memdir.cli import app
from memdir.skills import (
    AlfworldEnv,
    AlfworldTask,
    RunConfig,
    audit_library,
    build_report,
    list_tasks,
    load_records,
    load_steps,
    run_cell,
)
from memdir.store import Store
from memdir.store.history import History

GAMES = [
    "pick_two_obj_and_place-ToiletPaper-None-Toilet-408",
    "pick_two_obj_and_place-SprayBottle-None-Toilet-429",
    "pick_two_obj_and_place-ToiletPaper-None-Drawer-423",
]


@pytest.fixture(scope="module")
def split() -> tuple[Path, list[AlfworldTask]]:
    folder = alfworld_split()
    return folder, list_tasks(folder)


@pytest.fixture(scope="module")
def ran(split: tuple[Path, list[AlfworldTask]],
        tmp_path_factory: pytest.TempPathFactory) -> tuple[RunConfig, Path]:
    folder, tasks = split
    out = tmp_path_factory.mktemp("run")
    ids = [t.task_id for t in tasks if t.task_id.split("/")[0] in GAMES]
    config = RunConfig(name="t", data=folder, output=out, variants=["episode_log_recent"],
                       task_ids=ids, episode_k=2)
    env = AlfworldEnv(max_steps=config.max_steps, facts=True,
                      cache_dir=tmp_path_factory.mktemp("cache"))
    cell = config.cells()[0]
    asyncio.run(run_cell(config, cell, tasks, env))
    return config, out / cell.key / "full"


def test_every_task_is_snapshotted_and_reads_only_earlier_episodes(
        ran: tuple[RunConfig, Path]) -> None:
    _, chain = ran
    steps = load_steps(chain)
    records = load_records(chain)
    assert sorted(steps) == sorted(records) == [0, 1, 2]
    history = History(Store(chain / "store"))
    log = history.steps()
    assert [s.message.split(" ")[:2] for s in log[1:]] == [["task", "001"], ["task", "002"],
                                                           ["task", "003"]]
    for position, step in steps.items():
        assert step.task_id in log[position + 1].message
        assert step.snapshot == log[position + 1].commit
        # leak-free: before task t the store held exactly the t-1 earlier episodes
        before = history.read_state(position)
        assert len(before) == position
        assert all(path in before for path in step.served_paths)
        assert len(step.served_paths) == min(position, 2)
        assert step.store_files == position + 1 and step.store_bytes > 0
        assert step.schema_findings == 0 and step.gate_findings == 0
        assert step.retrieval is None and step.curation is None  # zero model cost
    newest = steps[2].served_paths[0]
    assert newest.startswith("/memories/episodes/002-pick-two-obj-and-place-")
    text = Store(chain / "store").read(newest)
    assert f"# Task {records[1].task_id}" in text and "metadata:" in text
    assert audit_library(Store(chain / "store")) == []


def test_a_rerun_skips_recorded_tasks_and_reintegrates_a_cut_short_one(
        ran: tuple[RunConfig, Path], split: tuple[Path, list[AlfworldTask]],
        tmp_path: Path) -> None:
    config, chain = ran
    copy = tmp_path / "copy"
    shutil.copytree(chain.parent, copy)
    (copy / "full" / "steps" / "002.json").unlink()  # integration of task 3 was cut short
    store = Store(copy / "full" / "store")
    before = store.files()
    moved = config.model_copy(update={"output": tmp_path})
    cell = config.cells()[0]
    shutil.move(str(copy), str(tmp_path / cell.key))
    env = AlfworldEnv(max_steps=config.max_steps, facts=True)
    asyncio.run(run_cell(moved, cell, split[1], env))
    again = tmp_path / cell.key / "full"
    assert sorted(load_steps(again)) == [0, 1, 2]
    assert Store(again / "store").files() == before  # episode 3 rewritten once, not twice
    assert len(History(Store(again / "store")).steps()) == 5  # start, 3 tasks, redone task 3


def test_report_from_records(ran: tuple[RunConfig, Path]) -> None:
    config, chain = ran
    md, table = build_report(config.output)
    text = md.read_text(encoding="utf-8")
    wins = sum(s.success for s in load_steps(chain).values())
    rate = f"{100 * wins / 3:.1f}"
    # Table 15: tasks, solved, the micro rate and the one family's rate
    assert f"| full-chain.episode_log_recent.exec-expert | 3 | {wins} | {rate} | {rate} |" in text
    assert "$0.0000" in text  # the expert and the episode log cost nothing
    rows = list(csv.DictReader(io.StringIO(table.read_text(encoding="utf-8"))))
    assert [int(r["store_files"]) for r in rows] == [1, 2, 3]
    assert {r["family"] for r in rows} == {"pick_two_obj"}
    result = CliRunner().invoke(app, ["skills", "report", str(config.output)])
    assert result.exit_code == 0 and "report.md" in result.output


def test_each_chain_is_an_eval_whose_samples_are_its_attempts_in_order(
        ran: tuple[RunConfig, Path], split: tuple[Path, list[AlfworldTask]],
        tmp_path: Path) -> None:
    config, chain = ran
    (entry,) = json.loads((chain / "evals.json").read_text())
    log = read_eval_log(str(config.output / entry["log"]))
    assert log.status == "success" and log.eval.task.endswith("__full")
    samples = sorted(log.samples or [], key=lambda s: str(s.id))
    assert [s.id for s in samples] == ["000", "001", "002"]
    steps = load_steps(chain)
    for sample in samples:
        step = steps[int(str(sample.id))]
        assert sample.metadata["task_id"] == step.task_id
        assert sample.scores is not None
        assert sample.scores["task_success"].value == float(step.success)
    # the attempts ran one after another, in chain order
    assert [steps[p].task_id for p in range(3)] == [s.metadata["task_id"] for s in samples]
    # a rerun's eval holds only the attempts without a record (here: the third, whose
    # attempt was cut short before its record, so the store is as task 2 left it)
    cell = config.cells()[0]
    shutil.copytree(chain.parent, tmp_path / cell.key)
    again = tmp_path / cell.key / "full"
    (again / "tasks" / "002.json").unlink()
    (again / "steps" / "002.json").unlink()
    store = Store(again / "store")
    before_third = History(store).read_state(2)
    for path in store.files():
        if path not in before_third:
            store.delete(path)
    env = AlfworldEnv(max_steps=config.max_steps, facts=True)
    asyncio.run(run_cell(config.model_copy(update={"output": tmp_path}), cell, split[1], env))
    first, second = json.loads((again / "evals.json").read_text())
    resumed = read_eval_log(str(tmp_path / second["log"]))
    assert [s.id for s in resumed.samples or []] == ["002"]
    assert sorted(load_steps(again)) == [0, 1, 2]
