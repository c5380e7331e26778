"""Reorganized builds: passes until one changes nothing, a snapshot per pass, two prompts."""

from __future__ import annotations

from pathlib import Path

from memdir.bench import Dataset
from memdir.builders import BuildSpec, build_reorganized, builder_role
from memdir.sample import load_sample_conversation
from memdir.store import Frontmatter, render_file
from scripted import Script, calls, text

PEOPLE = render_file(Frontmatter(name="people", description="Who is who"),
                     "# People\n\n- Maya moved to Lisbon [S1T2]\n")


def _two_passes() -> Script:
    return Script([
        calls(("view", {"path": "/memories"})),
        calls(("create", {"path": "/memories/people.md", "file_text": PEOPLE}),
              ("delete", {"path": "/memories/session-01.md"})),
        text("Pass 1: people.md made, session 1 folded in."),
        calls(("view", {"path": "/memories"})),
        text("The store is finished; nothing to change."),
    ])


async def test_a_pass_that_changes_nothing_ends_the_build(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    script = _two_passes()
    built = await build_reorganized(conv, tmp_path, script.model(), max_passes=5)
    script.assert_done()
    record = built.record
    assert [(u.kind, u.index, u.changed) for u in record.units] == [
        ("pass", 1, True), ("pass", 2, False)]
    assert record.stopped_early and record.max_passes == 5
    assert [s.message for s in built.history.steps()] == [
        "verbatim dump", "pass 1: pass 1 of 5", "pass 2: pass 2 of 5"]
    assert built.history.diff(1, 2).empty and not built.history.diff(0, 1).empty
    assert built.store.read("/memories/people.md") == PEOPLE
    assert "/memories/session-01.md" not in record.files
    assert "pass 1 of at most 5" in script.seen[0][1].text
    assert "pass 2 of at most 5" in script.seen[3][1].text
    assert record.model_calls == 5 and record.tool_calls == 4


async def test_the_pass_limit_stops_a_build_that_keeps_changing(tmp_path: Path) -> None:
    script = Script([
        calls(("create", {"path": "/memories/people.md", "file_text": PEOPLE})),
        text("done"),
    ])
    built = await build_reorganized(load_sample_conversation(), tmp_path, script.model(),
                                    max_passes=1, condense=True)
    script.assert_done()
    assert len(built.record.units) == 1 and not built.record.stopped_early
    assert built.record.variant == "reorganized-condense"


async def test_preserve_and_condense_differ_in_prompt_and_key(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    preserve = await build_reorganized(conv, tmp_path, _two_passes().model())
    condense = await build_reorganized(conv, tmp_path, _two_passes().model(), condense=True)
    assert preserve.record.prompt_name == "reorganize-preserve"
    assert condense.record.prompt_name == "reorganize-condense"
    assert preserve.record.prompt_hash != condense.record.prompt_hash
    assert preserve.folder != condense.folder
    # the pass limit is part of the key
    role = builder_role("reorganized-preserve", conv)
    five = BuildSpec.make("reorganized-preserve", conv, "mockllm/model", role, max_passes=5)
    four = BuildSpec.make("reorganized-preserve", conv, "mockllm/model", role, max_passes=4)
    assert five.key == preserve.record.key and four.key != five.key


def test_block_locators_get_the_blocks_reorganizer(persona_fixture: Dataset) -> None:
    conv = persona_fixture.conversations[0]
    assert conv.locator_kind == "block"
    assert builder_role("reorganized-preserve", conv).prompt == "reorganize-preserve-blocks"
    assert builder_role("reorganized-condense", conv).prompt == "reorganize-condense-blocks"
    assert builder_role("curated", conv).prompt == "management-blocks"
    assert builder_role("foldered", conv, max_rounds=7).max_rounds == 7
