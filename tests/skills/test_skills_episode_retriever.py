"""The episode log served by a retriever: real games, the expert, a scripted or offline retriever.

The log is written as before (one rendered episode per task, no model); before
each task a retriever reads the log with the read set and cites episodes, which
are served whole and billed as retrieval. Skipped where alfworld or the games
are absent.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from inspect_ai.model import ModelOutput
from skill_runs import alfworld_split

from memdir.agents import PriceTable
from memdir.progress import reporting
from memdir.runs import read_record
from memdir.skills import (
    AlfworldEnv,
    AlfworldTask,
    RunConfig,
    ServedRecord,
    build_report,
    chains_for,
    list_tasks,
    load_steps,
    make_variant,
    run_cell,
)
from memdir.store import Store, slugify
from memdir.store.history import History
from scripted import Script, calls, text, usage

GAMES = [
    "pick_two_obj_and_place-ToiletPaper-None-Toilet-408",
    "pick_two_obj_and_place-SprayBottle-None-Toilet-429",
    "pick_two_obj_and_place-ToiletPaper-None-Drawer-423",
]
USAGE = usage(300, 20)


@pytest.fixture(scope="module")
def split() -> tuple[Path, list[AlfworldTask]]:
    folder = alfworld_split()
    return folder, list_tasks(folder)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> AlfworldEnv:
    return AlfworldEnv(max_steps=50, facts=True, cache_dir=tmp_path_factory.mktemp("cache"))


def _config(split: tuple[Path, list[AlfworldTask]], out: Path, retriever: str) -> RunConfig:
    folder, tasks = split
    ids = [t.task_id for t in tasks if t.task_id.split("/")[0] in GAMES]
    return RunConfig(name="t", data=folder, output=out, variants=["episode_log"],
                     task_ids=ids, retriever=retriever)


def _episode(position: int, task: AlfworldTask) -> str:
    return f"/memories/episodes/{position + 1:03d}-{slugify(task.task_id.split('/')[0])}.md"


def test_the_retriever_cites_episodes_that_are_served_whole_and_billed(
        split: tuple[Path, list[AlfworldTask]], env: AlfworldEnv, tmp_path: Path) -> None:
    config = _config(split, tmp_path / "run", "mock/retriever")
    [(_, chain)] = chains_for("full-chain", split[1], 0, task_ids=config.task_ids)
    first, second = _episode(0, chain[0]), _episode(1, chain[1])
    outputs: list[ModelOutput] = [
        calls(("view", {"path": "/memories/episodes"}), u=USAGE),
        text(f"[{first}] - the same kind of task, won", USAGE),
        calls(("view", {"path": second}), u=USAGE),
        text(f"[{second}] - same goal family\n[{first}] - also placed two objects", USAGE),
    ]
    script = Script(outputs)
    cell = config.cells()[0]
    assert cell.key == "full-chain.episode_log.exec-expert"
    assert cell.retriever == "mock/retriever" and cell.curator is None
    asyncio.run(run_cell(config, cell, split[1], env, {"mock/retriever": script.model()}))
    script.assert_done()
    chain_dir = tmp_path / "run" / cell.key / "full"
    steps = load_steps(chain_dir)
    assert steps[0].retrieval is None and steps[0].served_paths == []  # empty log: no call
    assert steps[1].served_paths == [first]
    assert steps[2].served_paths == [second, first]
    for position in (1, 2):
        record = steps[position].retrieval
        assert record is not None and record.rounds == 2
        assert record.prompt_name == "retriever-episodes"
        assert record.usage.input == 600 and record.usage.output == 40
        assert steps[position].curation is None  # the log is still written without a model
    # served whole: the guidance holds each cited episode's full text as the store had it
    history = History(Store(chain_dir / "store"))
    before_third = history.read_state(2)
    served = read_record(chain_dir / "steps" / "002.served.json", ServedRecord)
    assert before_third[second].strip() in served.guidance
    assert before_third[first].strip() in served.guidance
    # billed like any retrieval: a price for the retriever's model shows in the report
    prices = tmp_path / "prices.yaml"
    prices.write_text("mockllm/model: {input: 1000000, output: 1000000}\n", encoding="utf-8")
    md, _ = build_report(tmp_path / "run", PriceTable.load(prices))
    row = next(line for line in md.read_text(encoding="utf-8").splitlines()
               if line.startswith(f"| {cell.key} | ") and "$" in line)  # Table 16
    # the search (retriever) column: 2 tasks x (600 + 40) tokens at $1 per token
    assert row.split(" | ")[4] == "$1280.0000"


def test_the_offline_grep_reader_serves_earlier_episodes_only(
        split: tuple[Path, list[AlfworldTask]], env: AlfworldEnv, tmp_path: Path) -> None:
    config = _config(split, tmp_path / "run", "memdir/grep-reader")
    cell = config.cells()[0]
    shown = io.StringIO()
    with reporting(stream=shown, enabled=True):
        asyncio.run(run_cell(config, cell, split[1], env))
    lines = shown.getvalue().splitlines()
    assert [line.split(" · ")[0] for line in lines] == ["task 1/3", "task 2/3", "task 3/3"]
    assert "elapsed" in lines[0] and " left · full: " in lines[1]
    assert lines[2].endswith((" won", " failed"))
    chain_dir = tmp_path / "run" / cell.key / "full"
    steps = load_steps(chain_dir)
    history = History(Store(chain_dir / "store"))
    assert steps[0].retrieval is None
    for position in (1, 2):
        step = steps[position]
        before = history.read_state(position)
        assert step.served_paths and all(p in before for p in step.served_paths)
        assert step.retrieval is not None and step.retrieval.zero_cost_baseline
        assert step.cost("retrieval", PriceTable.load()) == 0.0


def test_the_retriever_variant_needs_a_model(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="episode_log_recent"):
        make_variant("episode_log", Store(tmp_path / "s", create=True))
    recent = make_variant("episode_log_recent", Store(tmp_path / "s"), k=1)
    assert recent.name == "episode_log_recent"
