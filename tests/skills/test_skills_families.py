"""The valid_seen task pool, its families and goals, and the chain orders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memdir.skills import (
    CHAIN_COUNT,
    FAMILIES,
    AlfworldTask,
    family_of,
    full_chain_order,
    list_tasks,
    order_digest,
    read_goal,
    three_chain_orders,
)

# The full-chain order of valid_seen under seed 0, pinned: a change here changes the study.
SEED0_DIGEST = "7bcd5309598bb848d71333c58f27904dd8c2205af59eb17dd61c642ae18e5452"
COUNTS = {"pick_and_place": 35, "clean": 27, "cool": 25, "heat": 16,
          "look_at_obj_in_light": 13, "pick_two_obj": 24}


@pytest.fixture(scope="module")
def tasks() -> list[AlfworldTask]:
    split = Path(__file__).resolve().parents[2].parent / "shared/data/alfworld/valid_seen"
    if not split.is_dir():
        pytest.skip("../shared/data/alfworld/valid_seen is not present on this machine")
    return list_tasks(split)


def test_valid_seen_has_140_tasks_in_six_families(tasks: list[AlfworldTask]) -> None:
    assert len(tasks) == 140
    assert len({t.task_id for t in tasks}) == 140
    assert Counter(t.family for t in tasks) == COUNTS
    assert all(t.game_file.is_file() and t.task_id.count("/") == 1 for t in tasks)


def test_goals_come_from_the_game_files(tasks: list[AlfworldTask]) -> None:
    by_id = {t.task_id: t for t in tasks}
    pick_two = by_id["pick_two_obj_and_place-ToiletPaper-None-Toilet-408/"
                     "trial_T20190909_080302_174780"]
    assert pick_two.goal == "put two toiletpaper in toilet."
    openings = {"pick_and_place": ("put",), "clean": ("put", "clean"), "cool": ("put", "cool"),
                "heat": ("put", "heat"), "look_at_obj_in_light": ("look at", "examine"),
                "pick_two_obj": ("put two", "find two")}
    for task in tasks:
        assert task.goal.endswith(".") and "UNKNOWN" not in task.goal
        assert task.goal.startswith(openings[task.family]), task.goal


def test_family_of_rejects_unknown_prefixes() -> None:
    assert family_of("pick_heat_then_place_in_recep-Egg-None-Fridge-1") == "heat"
    with pytest.raises(ValueError, match="no known family prefix"):
        family_of("pick_and_slice-Apple-None-Plate-1")


def test_unprepared_game_file_and_missing_split_are_explained(tmp_path: Path) -> None:
    game = tmp_path / "game.tw-pddl"
    game.write_text(json.dumps({"grammar": '"rhs": "Your task is to: UNKNOWN GOAL."'}))
    with pytest.raises(ValueError, match="carries no goal"):
        read_goal(game)
    with pytest.raises(FileNotFoundError, match="not a folder"):
        list_tasks(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="no \\*/trial_\\*/game.tw-pddl"):
        list_tasks(tmp_path)


def test_full_order_is_pinned_and_independent_of_input_order(tasks: list[AlfworldTask]) -> None:
    order = full_chain_order(tasks, seed=0)
    assert order_digest(order) == SEED0_DIGEST
    assert order_digest(full_chain_order(list(reversed(tasks)), seed=0)) == SEED0_DIGEST
    assert sorted(t.task_id for t in order) == sorted(t.task_id for t in tasks)
    assert order_digest(full_chain_order(tasks, seed=1)) != SEED0_DIGEST


def test_full_order_is_identical_in_another_process(tasks: list[AlfworldTask]) -> None:
    split = tasks[0].game_file.parents[2]
    code = ("import sys; from pathlib import Path; from memdir.skills import *; "
            "print(order_digest(full_chain_order(list_tasks(Path(sys.argv[1])), seed=0)))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code, str(split)], capture_output=True,
                         text=True, check=True, env=env)
    assert out.stdout.strip() == SEED0_DIGEST


def test_full_order_is_round_robin_over_families(tasks: list[AlfworldTask]) -> None:
    order = full_chain_order(tasks, seed=0)
    smallest = min(COUNTS.values())
    head = [t.family for t in order[: smallest * len(FAMILIES)]]
    assert head == list(FAMILIES) * smallest
    assert [t.family for t in order[-8:]] == ["pick_and_place"] * 8
    for family in FAMILIES:  # within a family, the seeded rank decides
        members = [t for t in order if t.family == family]
        assert members != sorted(members, key=lambda t: t.task_id)


def test_three_chains_split_every_family_evenly(tasks: list[AlfworldTask]) -> None:
    chains = three_chain_orders(tasks, seed=0)
    assert len(chains) == CHAIN_COUNT
    assert [len(c) for c in chains] == [47, 47, 46]
    ids = [t.task_id for chain in chains for t in chain]
    assert sorted(ids) == sorted(t.task_id for t in tasks)
    for chain in chains:
        counts = Counter(t.family for t in chain)
        for family in FAMILIES:
            assert abs(counts[family] - COUNTS[family] / CHAIN_COUNT) < 1
        assert [t.family for t in chain[: len(FAMILIES)]] == list(FAMILIES)
    again = three_chain_orders(list(reversed(tasks)), seed=0)
    assert [order_digest(c) for c in again] == [order_digest(c) for c in chains]
