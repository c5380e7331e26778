"""A curated (GS) cell over two real games with scripted models in every role.

The execution agent, curator and retriever are mockllm models with scripted
outputs (each with explicit usage). Skipped where alfworld or the games are absent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessageSystem, ModelOutput, get_model

from memdir.skills import (
    AlfworldEnv,
    RunConfig,
    alfworld_missing,
    audit_library,
    build_report,
    list_tasks,
    load_steps,
    parse_action,
    run_cell,
)
from memdir.skills._execution import step_turn
from memdir.store import Store
from scripted import Script, calls, text, usage

GAMES = ["pick_two_obj_and_place-ToiletPaper-None-Toilet-408",
         "pick_two_obj_and_place-ToiletPaper-None-Drawer-423"]
NOTE = ("---\nname: toilet-paper\ndescription: Where toilet paper was found\nmetadata:\n"
        "  type: note\n  sources:\n    - {task: t, outcome: failure}\n---\n"
        "# Observation\nLook on the toilet and in the cabinets.\n")
SKILL = NOTE.replace("type: note", "type: skill").replace("name: toilet-paper", "name: fetch")



USAGE = usage(200, 8)


def _call(name: str, **args: Any) -> ModelOutput:
    return calls((name, args), u=USAGE)


def _text(content: str) -> ModelOutput:
    return text(content, USAGE)

def test_parse_action_reads_the_action_tag() -> None:
    reply = ("<think>The paper may be on the toilet; <action> is not yet decided.</think>\n"
             "<action>go to toilet 1</action>")
    assert parse_action(reply) == "go to toilet 1"
    assert parse_action("<think>look first</think>\n<action> look </action>") == "look"
    assert parse_action("<think>still thinking</think>") == ""  # reasoning is never an action
    assert parse_action("<action>open drawer 1") == "open drawer 1"  # cut off at the cap


def test_step_turns_count_from_the_second_step() -> None:
    first = step_turn(1, "You are in a room.", ["look", "inventory"])
    second = step_turn(2, "Nothing happens.", ["look"])
    assert "step" not in first.lower().split("think")[0]
    assert second.startswith("You are at step 2.")
    assert "[look, inventory]" in first and "Nothing happens." in second


def test_parse_action_falls_back_to_the_first_command_line() -> None:
    assert parse_action("`go to toilet 1`") == "go to toilet 1"
    assert parse_action("\nAction: open cabinet 2.\nbecause...") == "open cabinet 2"
    assert parse_action("> look") == "look"
    assert parse_action("  \n") == ""


def test_a_curated_gs_cell_over_real_games(shared_data: Path, tmp_path: Path) -> None:
    reason = alfworld_missing()
    if reason is not None:
        pytest.skip(reason)
    split = shared_data / "alfworld" / "valid_seen"
    if not split.is_dir():
        pytest.skip("the ALFWorld split is not present")
    tasks = list_tasks(split)
    ids = [t.task_id for t in tasks if t.task_id.split("/")[0] in GAMES]
    execution = Script([_text(a) for a in [
        "<think>Survey the room first.</think>\n<action>look</action>", "go to toilet 1",
        "inventory"] * 2])
    curator = Script([
        _call("create", path="/memories/fetch.md", file_text=SKILL),
        _call("create", path="/memories/toilet-paper.md", file_text=NOTE),
        _text("Failure: the agent never searched; wrote an observation note."),
        _text("Failure again; nothing new to add."),
    ])
    retriever = Script([
        _call("view", path="/memories"),
        _text("Check the toilet first, then the cabinets.\n"
              "Source: [/memories/toilet-paper.md]"),
    ])
    config = RunConfig(name="t", data=split, output=tmp_path / "run",
                       variants=["curated_skills_mem_gs"], task_ids=ids, max_steps=3,
                       curators=["mock/curator"], retriever="mock/retriever",
                       executions=["mock/exec"])
    models = {"mock/curator": get_model("mockllm/model", custom_outputs=curator),
              "mock/retriever": get_model("mockllm/model", custom_outputs=retriever),
              "mock/exec": get_model("mockllm/model", custom_outputs=execution)}
    env = AlfworldEnv(max_steps=3, cache_dir=tmp_path / "cache")
    cell = config.cells()[0]
    asyncio.run(run_cell(config, cell, tasks, env, models))
    steps = load_steps(tmp_path / "run" / cell.key / "full")
    first, second = steps[0], steps[1]
    assert not first.success and first.steps_used == 3
    assert first.execution is not None and first.execution.rounds == 3
    assert first.execution.usage.input == 600 and first.execution.temperature == 0.0
    assert first.retrieval is None  # the library was empty: no retrieval call
    assert first.curation is not None and len(first.gate_refusals) == 1
    assert "fetch.md" in first.gate_refusals[0]
    assert first.store_files == 1 and first.gate_findings == 0
    assert second.retrieval is not None and second.retrieval.rounds == 2
    assert second.served_paths == ["/memories/toilet-paper.md"]
    system = execution.seen[3][0]
    assert isinstance(system, ChatMessageSystem)
    assert "Check the toilet first" in system.text and "Source:" in system.text
    assert len(execution.seen[5]) == 6  # system, then user/assistant turns appended
    assert "You are at step" not in execution.seen[0][-1].text
    assert execution.seen[1][-1].text.startswith("You are at step 2.")
    assert "<action>" in system.text and "<think>" in system.text
    assert audit_library(Store(tmp_path / "run" / cell.key / "full" / "store")) == []
    md, _ = build_report(tmp_path / "run")
    assert "0 / 2" in md.read_text(encoding="utf-8")
    cost_row = next(line for line in md.read_text(encoding="utf-8").splitlines()
                    if line.startswith(f"| {cell.key} | mock/exec | 0 | $"))  # Table 16
    # nothing solved: no cost per solved task
    assert cost_row.rstrip(" |").split(" | ")[-2:] == ["—", "—"]
