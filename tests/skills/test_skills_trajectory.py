"""Trajectory records, their markdown rendering, and the put/move command translation."""

from __future__ import annotations

from memdir.skills import Step, Trajectory, render_trajectory, to_legacy, to_move


def _trajectory(**changes: object) -> Trajectory:
    fields: dict[str, object] = {
        "task_id": "pick_and_place_simple-Mug-None-Desk-1/trial_T1",
        "family": "pick_and_place",
        "goal": "put a mug in desk.",
        "policy": "scripted",
        "initial_observation": "You are in the middle of a room.\n\n"
                               "Your task is to: put a mug in desk.",
        "steps": [Step(action="go to shelf 1", observation="You arrive at loc 3. On the shelf 1, "
                       "you see a mug 1."),
                  Step(action="take mug 1 from shelf 1", observation="You pick up the mug 1.")],
        "success": False, "ended": "step_cap", "max_steps": 2,
        "reset_seconds": 1.5, "wall_seconds": 2.25,
    }
    fields.update(changes)
    return Trajectory.model_validate(fields)


def test_rendering_states_goal_outcome_and_every_step_in_order() -> None:
    text = render_trajectory(_trajectory())
    assert text.startswith("# Task pick_and_place_simple-Mug-None-Desk-1/trial_T1\n")
    assert "- goal: put a mug in desk." in text
    assert "- outcome: failure: the step cap was reached before the goal (2 of 2 steps)" in text
    first, second = text.index("1. `go to shelf 1`"), text.index("2. `take mug 1 from shelf 1`")
    assert text.index("## Start") < first < second
    assert "   You pick up the mug 1." in text
    won = render_trajectory(_trajectory(success=True, ended="won"))
    assert "- outcome: success" in won


def test_rendering_of_an_empty_episode_and_a_note() -> None:
    text = render_trajectory(_trajectory(steps=[], ended="gave_up", note="no idea"))
    assert "(no action was taken)" in text
    assert "- note: no idea" in text
    assert "the policy stopped before the goal (0 of 2 steps)" in text


def test_json_round_trip_keeps_steps_used() -> None:
    record = _trajectory()
    dumped = record.model_dump(mode="json")
    assert dumped["steps_used"] == 2 and dumped["schema_version"] == 1
    assert Trajectory.model_validate_json(record.model_dump_json()) == record


def test_put_and_move_forms_translate_both_ways() -> None:
    legacy = "put soapbar 2 in/on cabinet 1"
    assert to_move(legacy) == "move soapbar 2 to cabinet 1"
    assert to_legacy(to_move(legacy)) == legacy
    for other in ("go to cabinet 1", "take mug 1 from desk 1", "look"):
        assert to_move(other) == other and to_legacy(other) == other
