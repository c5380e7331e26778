"""The outcome gate in the curator's tools, a scripted curation, and the library audits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.model._chat_message import ChatMessageTool

from memdir.skills import (
    AlfworldTask,
    Attempt,
    GatedLibrary,
    Served,
    Step,
    Trajectory,
    audit_gate,
    audit_library,
    audit_schema,
    make_variant,
)
from memdir.store import Store
from scripted import Script, calls, text, usage

TASK = "pick_heat_then_place_in_recep-Egg-None-Fridge-1/trial_T1"



USAGE = usage(120, 15)


def _call(name: str, **args: Any) -> ModelOutput:
    return calls((name, args), u=USAGE)


def _text(content: str) -> ModelOutput:
    return text(content, USAGE)

def entry(stem: str, kind: str, *outcomes: str, body: str = "# Steps\n1. go\n") -> str:
    sources = "".join(f"    - {{task: t{i}, outcome: {o}}}\n" for i, o in enumerate(outcomes))
    return (f"---\nname: {stem}\ndescription: A {kind} for tests\nmetadata:\n  type: {kind}\n"
            f"  sources:\n{sources}---\n{body}")


def failed_attempt() -> Trajectory:
    return Trajectory(task_id=TASK, family="heat", goal="heat some egg and put it in fridge.",
                      policy="scripted", initial_observation="You are in the middle of a room.",
                      steps=[Step(action="go to microwave 1", observation="Nothing happens.")],
                      success=False, ended="step_cap", max_steps=1, reset_seconds=0.0,
                      wall_seconds=0.0)


async def test_a_failed_attempt_cannot_create_a_skill_and_writes_a_note(store: Store) -> None:
    skill = entry("heat-an-egg", "skill", "failure")
    note = entry("microwave-pitfall", "note", "failure", body="# Lesson\nOpen it first.\n")
    script = Script([
        _call("create", path="/memories/heat-an-egg.md", file_text=skill),
        _call("create", path="/memories/microwave-pitfall.md", file_text=note),
        _text("Failure: wrote a note about the microwave."),
    ])
    model = get_model("mockllm/model", custom_outputs=script)
    variant = make_variant("curated_skills_mem", store, curator=model, retriever=model)
    done = await variant.integrate(0, failed_attempt(), Served())
    assert store.files() == ["/memories/microwave-pitfall.md"]
    refused = [m for m in script.seen[1] if isinstance(m, ChatMessageTool)]
    assert refused and refused[-1].error is not None
    assert "note" in refused[-1].text and "heat-an-egg.md was not written" in refused[-1].text
    assert len(done.refusals) == 1
    assert done.record is not None and done.record.rounds == 3
    assert done.record.usage.input == 360 and done.record.tool_errors == 1
    assert audit_library(store) == []


async def test_a_failure_may_correct_a_skill_but_not_extend_it(store: Store) -> None:
    store.create("/memories/heat.md", entry("heat", "skill", "success", "success",
                                            body="# Steps\n1. go to microwave\n2. heat\n"))
    original = store.read("/memories/heat.md")
    library = GatedLibrary(store)
    library.attempt = Attempt("t9", success=False)
    tools = library.toolset()
    grown = await tools.call("insert", {"path": "/memories/heat.md", "insert_line": 10,
                                        "insert_text": "3. wait"})
    assert grown.is_error and "may not extend" in grown.content
    assert store.read("/memories/heat.md") == original  # rolled back
    replaced = await tools.call("str_replace", {
        "path": "/memories/heat.md", "old_str": "2. heat",
        "new_str": "2. heat\n3. wait a minute"})
    assert replaced.is_error and "adds lines" in replaced.content
    assert store.read("/memories/heat.md") == original
    # The step the failure exposed is reworded in place, and the failure joins the sources.
    fixed = await tools.call("str_replace", {
        "path": "/memories/heat.md", "old_str": "1. go to microwave",
        "new_str": "1. go to microwave and open it before putting the egg in"})
    assert not fixed.is_error, fixed.content
    sourced = await tools.call("str_replace", {
        "path": "/memories/heat.md", "old_str": "{task: t1, outcome: success}",
        "new_str": "{task: t1, outcome: success}\n    - {task: t9, outcome: failure}"})
    assert not sourced.is_error, sourced.content
    assert store.read("/memories/heat.md").count("task:") == 3
    dropped = await tools.call("str_replace", {
        "path": "/memories/heat.md", "old_str": "    - {task: t0, outcome: success}\n",
        "new_str": ""})
    assert dropped.is_error and "not remove" in dropped.content
    demoted = await tools.call("str_replace", {"path": "/memories/heat.md",
                                               "old_str": "type: skill", "new_str": "type: note"})
    assert not demoted.is_error and "type: note" in store.read("/memories/heat.md")
    assert audit_library(store) == []


async def test_success_may_create_skills_but_the_schema_is_required(store: Store) -> None:
    library = GatedLibrary(store)
    library.attempt = Attempt("t1", success=True)
    tools = library.toolset()
    bare = "---\nname: heat\ndescription: no metadata\n---\nbody\n"
    missing = await tools.call("create", {"path": "/memories/heat.md", "file_text": bare})
    assert missing.is_error and "metadata" in missing.content and "sources" in missing.content
    only_failures = await tools.call("create", {"path": "/memories/heat.md",
                                                "file_text": entry("heat", "skill", "failure")})
    assert only_failures.is_error and "at least one successful" in only_failures.content
    ok = await tools.call("create", {"path": "/memories/heat.md",
                                     "file_text": entry("heat", "skill", "success")})
    assert not ok.is_error and store.files() == ["/memories/heat.md"]
    assert set(tools.tools) == {"view", "create", "str_replace", "insert", "delete", "rename",
                                "grep"} and tools.name == "skills-write"


def test_schema_audit_flags_bad_headers_and_metadata(store: Store) -> None:
    store.write("/memories/no-header.md", "just text\n")
    store.write("/memories/untyped.md", "---\nname: untyped\ndescription: d\n---\nx\n")
    store.write("/memories/bad-type.md",
                "---\nname: bad-type\ndescription: d\nmetadata:\n  type: recipe\n"
                "  sources: [{task: a, outcome: success}]\n---\n")
    store.write("/memories/bad-source.md",
                "---\nname: bad-source\ndescription: d\nmetadata:\n  type: note\n"
                "  sources: [{task: a, outcome: maybe}]\n---\n")
    store.write("/memories/good.md", entry("good", "note", "failure"))
    found = audit_schema(store)
    flagged = {f.path for f in found}
    assert flagged == {"/memories/no-header.md", "/memories/untyped.md",
                       "/memories/bad-type.md", "/memories/bad-source.md"}
    assert all(f.check == "schema" and f.problem for f in found)


def test_gate_audit_flags_skills_learned_only_from_failures(store: Store) -> None:
    store.write("/memories/bad-skill.md", entry("bad-skill", "skill", "failure", "failure"))
    store.write("/memories/mixed.md", entry("mixed", "skill", "failure", "success"))
    store.write("/memories/lesson.md", entry("lesson", "note", "failure"))
    found = audit_gate(store)
    assert [(f.path, f.check) for f in found] == [("/memories/bad-skill.md", "gate")]
    assert "t0, t1" in found[0].problem


def test_an_unset_attempt_is_a_bug_not_a_model_error(store: Store) -> None:
    library = GatedLibrary(store)
    with pytest.raises(RuntimeError, match="attempt"):
        library._current()


async def test_the_ungated_variant_lets_a_failure_write_a_skill(store: Store) -> None:
    script = Script([
        _call("create", path="/memories/heat-an-egg.md",
                  file_text=entry("heat-an-egg", "skill", "failure")),
        _text("Wrote a skill."),
    ])
    model = get_model("mockllm/model", custom_outputs=script)
    variant = make_variant("curated_skills", store, curator=model, retriever=model)
    done = await variant.integrate(0, failed_attempt(), Served())
    assert store.files() == ["/memories/heat-an-egg.md"] and done.refusals == []
    assert [f.check for f in audit_library(store)] == ["gate"]  # the audit still sees it
    assert done.record is not None and done.record.prompt_name == "curator-skills"
    system = script.seen[0][0].text
    assert "Outcome gate" not in system and "type: note" not in system


async def test_cite_retrieval_serves_cited_files_whole(store: Store) -> None:
    store.create("/memories/eggs.md", entry("eggs", "note", "success", body="# Eggs\nIn fridge\n"))
    script = Script([
        _text("[/memories/eggs.md] - it is about eggs\n[/memories/gone.md] - missing"),
        _text("none"),
    ])
    model = get_model("mockllm/model", custom_outputs=script)
    variant = make_variant("curated_skills_mem", store, curator=model, retriever=model)
    task = AlfworldTask(task_id=TASK, family="heat", goal="heat some egg.",
                        game_file=Path("x"))
    served = await variant.retrieve(1, task)
    assert served.paths == ["/memories/eggs.md"]
    assert served.guidance.startswith("### /memories/eggs.md") and "In fridge" in served.guidance
    assert served.record is not None and served.record.usage.input == 120
    nothing = await variant.retrieve(2, task)
    assert nothing.paths == [] and nothing.guidance == "" and nothing.record is not None


@pytest.mark.parametrize(
    ("variant_name", "prompt"),
    [
        ("curated_skills", "retriever-cite-broad"),
        ("curated_skills_mem", "retriever-cite"),
        ("curated_skills_mem_gs", "retriever-guidance"),
    ],
)
async def test_each_curated_variant_serves_with_its_own_bar(
    store: Store, variant_name: str, prompt: str
) -> None:
    store.create("/memories/eggs.md", entry("eggs", "note", "success", body="# Eggs\nIn fridge\n"))
    script = Script([_text("[/memories/eggs.md] - eggs")])
    model = get_model("mockllm/model", custom_outputs=script)
    variant = make_variant(variant_name, store, curator=model, retriever=model)
    task = AlfworldTask(task_id=TASK, family="heat", goal="heat some egg.", game_file=Path("x"))
    served = await variant.retrieve(1, task)
    assert served.record is not None and served.record.prompt_name == prompt
    script.assert_done()


# The paper's rule on concrete edits: after a failure, a skill may have the one step the
# failure exposed corrected (reworded, replaced, removed, or given its missing
# precondition on one line beside it) and the failure added to its sources; nothing that
# extends the procedure. Sources may sit in metadata.sources or a "## Sources" section.
STEPS = "# Steps\n1. go to microwave 1\n2. heat egg 1 with microwave 1\n3. go to fridge 1\n"


def sectioned(stem: str, kind: str, pairs: str, body: str = STEPS) -> str:
    """An entry whose sources are a body section, not metadata.sources."""
    return (f"---\nname: {stem}\ndescription: A {kind} for tests\nmetadata:\n  type: {kind}\n"
            f"---\n{body}\n## Sources\n{pairs}")


@pytest.mark.parametrize(("old_str", "new_str", "allowed", "why"), [
    # a missing precondition, put beside the step it guards (the rest renumbered)
    ("1. go to microwave 1\n2. heat egg 1 with microwave 1\n3. go to fridge 1",
     "1. go to microwave 1\n2. open microwave 1\n3. heat egg 1 with microwave 1\n"
     "4. go to fridge 1", True, ""),
    ("2. heat egg 1 with microwave 1",
     "2. open microwave 1, then heat egg 1 with microwave 1", True, ""),  # reworded in place
    ("3. go to fridge 1\n", "", True, ""),  # a wrong step removed
    ("3. go to fridge 1", "3. go to fridge 1\n4. put egg 1 in/on fridge 1", False,
     "adds lines without rewriting"),  # a new step appended
    ("2. heat egg 1 with microwave 1",
     "2. open microwave 1\n3. heat egg 1 with microwave 1\n4. close microwave 1", False,
     "turns 1 line(s) into 3"),  # one step grown into a sub-procedure
    ("1. go to microwave 1\n2. heat egg 1 with microwave 1\n3. go to fridge 1",
     "1. go to microwave 1 first\n2. heat egg 1 with microwave 1\n3. go to fridge 1 last",
     False, "2 separate places"),  # two steps changed in one edit
    ("3. go to fridge 1", "## Pitfalls\n3. go to fridge 1, not the countertop", False,
     "adds a heading"),  # a reworded step under a new section
])
async def test_a_failure_may_correct_one_step_of_a_skill_in_place(
        store: Store, old_str: str, new_str: str, allowed: bool, why: str) -> None:
    store.create("/memories/heat.md", entry("heat", "skill", "success", body=STEPS))
    original = store.read("/memories/heat.md")
    library = GatedLibrary(store)
    library.attempt = Attempt("t9", success=False)
    result = await library.toolset().call("str_replace", {
        "path": "/memories/heat.md", "old_str": old_str, "new_str": new_str})
    assert result.is_error is not allowed, result.content
    if allowed:
        assert store.read("/memories/heat.md") == original.replace(old_str, new_str)
    else:
        assert why in result.content and "note" in result.content
        assert store.read("/memories/heat.md") == original  # rolled back
    assert audit_library(store) == []


async def test_sources_may_be_a_section_of_the_body(store: Store) -> None:
    library = GatedLibrary(store)
    library.attempt = Attempt("t1", success=True)
    tools = library.toolset()
    skill = sectioned("heat", "skill", "- {task: t1, outcome: success}\n")
    made = await tools.call("create", {"path": "/memories/heat.md", "file_text": skill})
    assert not made.is_error, made.content
    # a section that lists only failures makes no skill, for a success too
    bad = await tools.call("create", {"path": "/memories/cool.md", "file_text": sectioned(
        "cool", "skill", "- t1: failure\n")})
    assert bad.is_error and "at least one successful" in bad.content
    # neither place names an attempt: the schema asks for one, naming both places
    bare = await tools.call("create", {"path": "/memories/clean.md", "file_text": (
        "---\nname: clean\ndescription: d\nmetadata:\n  type: note\n---\nRinse it.\n")})
    assert bare.is_error and "## Sources" in bare.content and "metadata.sources" in bare.content
    odd = await tools.call("create", {"path": "/memories/clean.md", "file_text": sectioned(
        "clean", "note", "- learned somewhere\n")})
    assert odd.is_error and "names no task and outcome" in odd.content
    # a failure adds itself to the section, and may not drop or change what is there
    library.attempt = Attempt("t9", success=False)
    joined = await tools.call("insert", {
        "path": "/memories/heat.md", "insert_line": len(skill.splitlines()),
        "insert_text": "- {task: t9, outcome: failure}"})
    assert not joined.is_error, joined.content
    swapped = await tools.call("str_replace", {
        "path": "/memories/heat.md", "old_str": "- {task: t1, outcome: success}",
        "new_str": "- {task: t8, outcome: success}"})
    assert swapped.is_error and "not remove or change the others" in swapped.content
    extra = await tools.call("insert", {"path": "/memories/heat.md", "insert_line": 8,
                                        "insert_text": "4. put egg 1 in/on fridge 1"})
    assert extra.is_error and "adds lines" in extra.content
    assert store.files() == ["/memories/heat.md"]
    assert store.read("/memories/heat.md") == skill + "- {task: t9, outcome: failure}\n"
    # a note whose section lists a failure does not become a skill after a failure
    store.create("/memories/egg-note.md", sectioned("egg-note", "note", "- t2: success\n"))
    promoted = await tools.call("str_replace", {"path": "/memories/egg-note.md",
                                                "old_str": "type: note", "new_str": "type: skill"})
    assert promoted.is_error and "only a successful attempt may create a skill" in promoted.content
    assert audit_library(store) == []


def test_the_audit_reads_sources_from_either_place(store: Store) -> None:
    store.write("/memories/bad.md", sectioned("bad", "skill", "- t1: failure\n- t2 (failure)\n"))
    store.write("/memories/mixed.md", entry("mixed", "skill", "failure") + "\n## Sources\n"
                "- t5: success\n")
    store.write("/memories/good.md", sectioned("good", "skill", "- t3: success\n"))
    assert [(f.path, f.check) for f in audit_library(store)] == [("/memories/bad.md", "gate")]
    assert "t1, t2" in audit_gate(store)[0].problem
