"""Real ALFWorld games played offline with the handcoded expert (skipped without alfworld)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from skill_runs import alfworld_split

from memdir.skills import (
    AlfworldEnv,
    AlfworldTask,
    ChainMismatchError,
    EnvError,
    ExpertPolicy,
    GiveUp,
    Step,
    Trajectory,
    list_tasks,
    load_records,
    run_chain,
    run_episode,
)

# A quick game that ends in two legacy puts (10 steps), and one whose shelves share
# locations, which the expert only wins in 50 steps by examining the neighbours.
PICK_TWO = "pick_two_obj_and_place-ToiletPaper-None-Toilet-408/trial_T20190909_080302_174780"
LOOK_AT = "look_at_obj_in_light-Vase-None-DeskLamp-303/trial_T20190907_150418_457594"


class Scripted:
    """A policy that says the same thing every step, or gives up at once."""

    def __init__(self, action: str | None) -> None:
        self.name = f"scripted-{action}"
        self.action = action

    async def act(self, observation: str, admissible_actions: Sequence[str],
                  history: Sequence[Step]) -> str:
        if self.action is None:
            raise GiveUp("nothing to try")
        return self.action


@pytest.fixture(scope="module")
def games() -> list[AlfworldTask]:
    split = alfworld_split()
    by_id = {t.task_id: t for t in list_tasks(split)}
    return [by_id[PICK_TWO], by_id[LOOK_AT]]


@pytest.fixture(scope="module")
def env(games: list[AlfworldTask], tmp_path_factory: pytest.TempPathFactory) -> AlfworldEnv:
    return AlfworldEnv(facts=True, cache_dir=tmp_path_factory.mktemp("sas"))


@pytest.fixture(scope="module")
def chain(games: list[AlfworldTask], env: AlfworldEnv,
          tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Trajectory]]:
    folder = tmp_path_factory.mktemp("chain")
    records = asyncio.run(run_chain(games, ExpertPolicy(env), folder, env=env, name="test"))
    return folder, records


def test_expert_wins_real_games_through_the_legacy_put(chain: tuple[Path, list[Trajectory]],
                                                      games: list[AlfworldTask]) -> None:
    folder, records = chain
    assert [r.task_id for r in records] == [g.task_id for g in games]
    for record in records:
        assert record.success and record.ended == "won", record.note
        assert 0 < record.steps_used < 50 and record.steps[0].action == "look"
        assert "Your task is to: " + record.goal in record.initial_observation
        assert record.reset_seconds > 0 and record.wall_seconds >= record.reset_seconds
    puts = [s.action for s in records[0].steps if s.action.startswith("put ")]
    assert len(puts) == 2 and all(" in/on toilet 1" in p for p in puts)
    assert any(s.action.startswith("examine shelf") for s in records[1].steps)
    assert sorted(p.name for p in (folder / "tasks").iterdir()) == ["000.json", "001.json"]
    assert load_records(folder) == dict(enumerate(records))


async def test_rerun_skips_finished_tasks_and_resumes_missing_ones(
        chain: tuple[Path, list[Trajectory]], games: list[AlfworldTask],
        env: AlfworldEnv) -> None:
    folder, records = chain
    ran: list[int] = []

    async def note(position: int, record: Trajectory) -> None:
        ran.append(position)

    again = await run_chain(games, ExpertPolicy(env), folder, env=env, name="test",
                            after_task=note)
    assert again == records and ran == []
    (folder / "tasks" / "000.json").unlink()
    again = await run_chain(games, ExpertPolicy(env), folder, env=env, name="test",
                            after_task=note)
    assert ran == [0]
    assert [s.action for s in again[0].steps] == [s.action for s in records[0].steps]
    with pytest.raises(ChainMismatchError, match="differs in order_digest, task_ids"):
        await run_chain(games[::-1], ExpertPolicy(env), folder, env=env, name="test")


async def test_step_cap_give_up_and_unknown_commands(games: list[AlfworldTask],
                                                     env: AlfworldEnv) -> None:
    capped = AlfworldEnv(max_steps=3)
    with pytest.raises(EnvError, match="no game loaded"):
        capped.step("look")
    with pytest.raises(ValueError, match="at least 1"):
        AlfworldEnv(max_steps=0)
    record = await run_episode(capped, games[1], Scripted("dance wildly"))
    assert (record.success, record.ended, record.steps_used) == (False, "step_cap", 3)
    assert {s.observation for s in record.steps} == {"Nothing happens."}
    with pytest.raises(EnvError, match="episode is over"):
        capped.step("look")
    stopped = await run_episode(capped, games[1], Scripted(None))
    assert (stopped.ended, stopped.steps_used, stopped.note) == ("gave_up", 0, "nothing to try")
    env.reset(games[0])
    with pytest.raises(EnvError, match="another AlfworldEnv"):
        capped.step("look")
