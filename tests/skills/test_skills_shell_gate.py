"""The outcome gate under the Shell harness: each bash command's changes judged afterwards.

The commands run in the real sandbox (bubblewrap or unshare namespaces); the
tests skip where neither works.
"""

from __future__ import annotations

import pytest
from inspect_ai.model import get_model
from inspect_ai.model._chat_message import ChatMessageTool
from test_skills_gate import TASK, entry, failed_attempt

from memdir.skills import Attempt, GatedLibrary, RunConfig, Served, audit_library, make_variant
from memdir.store import Store
from memdir.tools._sandbox import available_backends
from scripted import Script, calls, text, usage

pytestmark = pytest.mark.skipif(
    not available_backends(), reason="the Shell harness needs bubblewrap or unshare namespaces")

U = usage(150, 10)
SKILL = entry("heat", "skill", "success", "success",
              body="# Steps\n1. go to microwave\n2. heat\n")


def _cat(path: str, content: str) -> str:
    return f"mkdir -p $(dirname {path}) && cat > {path} <<'EOF'\n{content}EOF\n"


def _bash(command: str) -> tuple[str, dict[str, object]]:
    return ("bash", {"command": command})


def _results(script: Script) -> list[ChatMessageTool]:
    return [m for m in script.seen[-1] if isinstance(m, ChatMessageTool)]


async def test_after_a_failure_bash_may_correct_a_step_but_not_create_or_extend_a_skill(
        store: Store) -> None:
    store.create("/memories/heat.md", SKILL)
    original = store.read_bytes("/memories/heat.md")
    new_skill = entry("cool", "skill", "success", "failure", body="# Steps\n1. open fridge\n")
    note = entry("microwave-pitfall", "note", "failure", body="# Lesson\nOpen it first.\n")
    script = Script([
        # (a) a new positive procedure, alongside a note in the same command
        calls(_bash(_cat("/memories/cool.md", new_skill)
                    + _cat("/memories/notes/microwave-pitfall.md", note)), u=U),
        # (b) extending the existing skill by a step
        calls(_bash("printf '3. put it in fridge\\n' >> /memories/heat.md"), u=U),
        # (c) rewording the step the failure exposed, in place
        calls(_bash("sed -i 's/^1. go to microwave$/1. go to microwave 1 and open it/' "
                    "/memories/heat.md"), u=U),
        text("Corrected the microwave step and noted the pitfall.", U),
    ])
    model = get_model("mockllm/model", custom_outputs=script)
    variant = make_variant("curated_skills_mem_gs", store, harness="shell", curator=model,
                           retriever=model)
    done = await variant.integrate(0, failed_attempt(), Served())
    created, extended, corrected = _results(script)
    assert created.error is not None
    assert "/memories/cool.md was not written" in created.text
    assert "only a successful attempt may create a skill" in created.text
    assert "Store changes: created" in created.text  # the shell's own report is kept
    assert extended.error is not None
    assert "/memories/heat.md was not written" in extended.text
    assert "may not extend" in extended.text
    assert corrected.error is None, corrected.text
    assert store.files() == ["/memories/notes/microwave-pitfall.md", "/memories/heat.md"]
    assert store.read("/memories/heat.md") == SKILL.replace(
        "1. go to microwave\n", "1. go to microwave 1 and open it\n")
    assert store.read("/memories/notes/microwave-pitfall.md") == note  # allowed, kept
    assert len(done.refusals) == 2
    assert done.record is not None and done.record.toolset == "skills-shell"
    assert done.record.prompt_name == "curator@shell" and done.record.tool_errors == 2
    assert audit_library(store) == []
    assert original != store.read_bytes("/memories/heat.md")
    script.assert_done()


async def test_a_refused_change_is_undone_to_the_exact_bytes(store: Store) -> None:
    odd = SKILL.replace("\n", "\r\n", 1) + "   \n"  # bytes a text round trip could alter
    store.write("/memories/heat.md", odd)
    before = store.read_bytes("/memories/heat.md")
    library = GatedLibrary(store, "shell")
    library.attempt = Attempt("t9", success=False)
    tools = library.toolset()
    assert tools.name == "skills-shell" and set(tools.tools) == {"bash"}
    grown = await tools.call("bash", {"command": "echo '3. wait' >> heat.md"})
    assert grown.is_error and "may not extend" in grown.content
    assert store.read_bytes("/memories/heat.md") == before
    # a pure move is no new skill; moved and extended, it is refused and both ends restored
    moved = await tools.call("bash", {"command": "mkdir -p heating && mv heat.md heating/"})
    assert not moved.is_error, moved.content
    assert store.read_bytes("/memories/heating/heat.md") == before
    grown_move = await tools.call("bash", {
        "command": "mv heating/heat.md heat.md && echo '3. wait' >> heat.md"})
    assert grown_move.is_error and "may not extend" in grown_move.content
    assert store.files() == ["/memories/heating/heat.md"]
    assert store.read_bytes("/memories/heating/heat.md") == before
    removed = await tools.call("bash", {"command": "rm heating/heat.md"})
    assert not removed.is_error and store.files() == []  # deleting is not gated
    assert library.refusals == [
        "/memories/heat.md: this attempt (t9) failed, so it may not extend the skill: this "
        "edit adds lines without rewriting any that were there. A failure may correct the one "
        "step it showed to be wrong: reword, replace or remove that step where it stands (a "
        "missing precondition goes into the step, or on one line beside it); anything more it "
        "teaches goes into a note (metadata.type: note)."] * 2


async def test_after_a_success_bash_may_create_and_extend_skills(store: Store) -> None:
    store.create("/memories/heat.md", SKILL)
    library = GatedLibrary(store, "shell")
    library.attempt = Attempt(TASK, success=True)
    tools = library.toolset()
    cool = entry("cool", "skill", "success", body="# Steps\n1. open fridge\n")
    made = await tools.call("bash", {"command": _cat("/memories/cool.md", cool)})
    assert not made.is_error, made.content
    grown = await tools.call("bash", {"command": "printf '3. put it in fridge\\n' >> heat.md"})
    assert not grown.is_error, grown.content
    assert store.read("/memories/cool.md") == cool
    assert store.read("/memories/heat.md").endswith("2. heat\n3. put it in fridge\n")
    # the schema and the all-failures rule bind a success too
    bad = await tools.call("bash", {"command": _cat("/memories/bad.md",
                                                    entry("bad", "skill", "failure"))})
    assert bad.is_error and "at least one successful" in bad.content
    assert not store.exists("/memories/bad.md") and library.refusals[-1].startswith(
        "/memories/bad.md: a skill must come from at least one successful attempt")


def test_a_config_runs_gated_variants_under_shell(tmp_path: object) -> None:
    from pathlib import Path

    config = RunConfig(name="h", output=Path(str(tmp_path)),
                       variants=["curated_skills_mem", "curated_skills_mem_gs"],
                       harnesses=["center", "shell"])
    keys = [c.key for c in config.cells()]
    assert [k for k in keys if k.endswith(".h-shell")] == [
        "full-chain.curated_skills_mem.cur-gpt-5_4-mini.exec-expert.h-shell",
        "full-chain.curated_skills_mem_gs.cur-gpt-5_4-mini.exec-expert.h-shell"]
    shell = next(c for c in config.cells() if c.key.endswith("mem_gs.cur-gpt-5_4-mini"
                                                             ".exec-expert.h-shell"))
    prompts, toolsets = shell.inputs()
    assert prompts == ["retriever-guidance@shell", "turn-task-guidance", "curator@shell"]
    assert toolsets[0] == "shell-read"


async def test_under_shell_a_failure_corrects_one_step_and_may_list_itself_in_a_section(
        store: Store) -> None:
    # The same rule as the write set's, judged on what each command left behind.
    store.create("/memories/heat.md", SKILL)
    library = GatedLibrary(store, "shell")
    library.attempt = Attempt("t9", success=False)
    tools = library.toolset()
    # a missing precondition on its own line beside the step it guards, the rest renumbered
    fixed = await tools.call("bash", {"command": (
        "sed -i 's/^2. heat$/2. open microwave 1\\n3. heat/' heat.md")})
    assert not fixed.is_error, fixed.content
    assert store.read("/memories/heat.md").endswith(
        "1. go to microwave\n2. open microwave 1\n3. heat\n")
    corrected = store.read_bytes("/memories/heat.md")
    # the failure lists itself in a Sources section instead of metadata.sources
    listed = await tools.call("bash", {"command": (
        "printf '\\n## Sources\\n- {task: t9, outcome: failure}\\n' >> heat.md")})
    assert not listed.is_error, listed.content
    listed_bytes = store.read_bytes("/memories/heat.md")
    assert listed_bytes.startswith(corrected)
    # a new section of advice, or a step grown into three, is refused and undone exactly
    section = await tools.call("bash", {"command": (
        "printf '## Pitfalls\\n- the egg cools fast\\n' >> heat.md")})
    assert section.is_error and "adds lines without rewriting" in section.content
    grown = await tools.call("bash", {"command": (
        "sed -i 's/^3. heat$/3. heat egg 1\\n4. wait\\n5. take egg 1/' heat.md")})
    assert grown.is_error and "turns 1 line(s) into 3" in grown.content
    assert store.read_bytes("/memories/heat.md") == listed_bytes
    assert len(library.refusals) == 2 and audit_library(store) == []


async def test_under_shell_a_success_may_keep_sources_in_a_section(store: Store) -> None:
    library = GatedLibrary(store, "shell")
    library.attempt = Attempt("t1", success=True)
    tools = library.toolset()
    skill = ("---\nname: cool\ndescription: Cool an object with the fridge; use for any "
             "'put a cool X in Y' task\nmetadata:\n  type: skill\n---\n# Steps\n"
             "1. cool X with fridge 1\n\n## Sources\n- t1: success\n")
    made = await tools.call("bash", {"command": _cat("/memories/cool.md", skill)})
    assert not made.is_error, made.content
    only_failures = skill.replace("cool", "warm").replace("t1: success", "t1: failure")
    bad = await tools.call("bash", {"command": _cat("/memories/warm.md", only_failures)})
    assert bad.is_error and "at least one successful" in bad.content
    assert store.files() == ["/memories/cool.md"] and audit_library(store) == []
