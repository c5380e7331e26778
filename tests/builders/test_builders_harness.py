"""Builders write through the harness: its tool set, its prompt wording, its own build key.

The foldering pass under Shell runs real ``bash`` in the sandbox (skipped where no
confinement works): moving files with ``mv`` passes the byte check, editing one
with ``sed -i`` fails the build like any other edit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.builders import (
    MODEL_BUILT,
    BuildError,
    BuildRecord,
    BuildSpec,
    build_curated,
    build_foldered,
    builder_role,
    variant_spec,
)
from memdir.conversation import chunk_conversation
from memdir.sample import load_sample_conversation
from memdir.tools import HARNESS_SPECS, TOOLSET_NAMES
from memdir.tools._sandbox import available_backends
from scripted import Script, calls, text

MOVES = {
    "/memories/session-01.md": "/memories/home/session-01.md",
    "/memories/session-02.md": "/memories/home/session-02.md",
    "/memories/session-03.md": "/memories/work/session-03.md",
}
needs_sandbox = pytest.mark.skipif(
    not available_backends(), reason="the Shell harness needs bubblewrap or unshare namespaces")


@pytest.mark.parametrize("variant", MODEL_BUILT)
@pytest.mark.parametrize("harness", list(HARNESS_SPECS))
def test_every_builder_takes_its_harnesss_tools_and_prompt(variant: str, harness: str) -> None:
    conv = load_sample_conversation()
    spec = variant_spec(variant)
    assert spec.role is not None
    role = builder_role(variant, conv, harness=harness)
    base = spec.prompt_for(conv.locator_kind)
    assert role.prompt == (base if harness == "center" else f"{base}@{harness}")
    assert role.toolset == HARNESS_SPECS[harness].build_toolsets[spec.role]
    assert role.toolset in TOOLSET_NAMES


def test_center_keeps_the_key_and_folder_it_had_before_harnesses() -> None:
    conv = load_sample_conversation()
    spec = BuildSpec.make("curated", conv, "mockllm/model", builder_role("curated", conv),
                          chunk_tokens=4000)
    old = spec.model_dump(mode="json")
    del old["harness"]  # a build.json written before harnesses were named
    loaded = BuildSpec.model_validate(old)
    assert loaded.harness == "center" and loaded.key == spec.key
    assert spec.folder_name == f"sample__curated__{spec.key[:16]}"
    keys = {spec.key}
    for harness in ("center+bm25", "shell"):
        other = BuildSpec.make("curated", conv, "mockllm/model",
                               builder_role("curated", conv, harness=harness),
                               chunk_tokens=4000, harness=harness)
        assert other.folder_name.startswith(f"sample__curated__{harness.replace('+', '-')}__")
        keys.add(other.key)
        # the same role under another harness's name is another build all the same
        renamed = spec.model_copy(update={"harness": harness})
        keys.add(renamed.key)
    assert len(keys) == 5


def test_a_build_record_without_a_harness_reads_as_center() -> None:
    record = BuildRecord.model_validate(json.loads(
        '{"version": 2, "variant": "curated", "conversation_id": "c", "tool_calls": 3}'))
    assert record.harness == "center" and record.toolset is None


async def test_a_curated_build_under_bm25_searches_and_records_its_harness(
        tmp_path: Path) -> None:
    conv = load_sample_conversation()
    note = "---\nname: maya\ndescription: Maya, her work\n---\n# Maya\n\n- Works at a bakery.\n"
    outputs = [calls(("search", {"query": "Maya work"}),
                     ("create", {"path": "/memories/people/maya.md", "file_text": note})),
               text("Filed.")]
    chunks = len(chunk_conversation(conv, 4000))
    script = Script(outputs + [text("Nothing new.")] * (chunks - 1))
    built = await build_curated(conv, tmp_path, script.model(), chunk_tokens=4000,
                                harness="center+bm25")
    script.assert_done()
    record = built.record
    assert (record.harness, record.toolset) == ("center+bm25", "bm25-write")
    base = variant_spec("curated").prompt_for(conv.locator_kind)
    assert record.prompt_name == f"{base}@center+bm25"
    first = record.units[0].episode
    assert first is not None and first.toolset == "bm25-write"
    assert [t.name for c in first.calls for t in c.tool_calls] == ["search", "create"]
    assert built.folder.name.startswith("sample__curated__center-bm25__")
    assert len(record.units) == chunks


@needs_sandbox
async def test_shell_foldering_moves_with_mv_and_is_verified(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    moves = " && ".join(f"mkdir -p {Path(new).parent} && mv {old} {new}"
                        for old, new in MOVES.items())
    script = Script([calls(("bash", {"command": "grep -r -m1 '^description:' /memories"})),
                     calls(("bash", {"command": moves})),
                     text("home (2 files), work (1 file); session-04 stays at the top.")])
    built = await build_foldered(conv, tmp_path, script.model(), harness="shell")
    script.assert_done()
    record = built.record
    assert (record.harness, record.toolset) == ("shell", "shell")
    assert {(m.old, m.new) for m in record.moves} == set(MOVES.items())
    assert record.folders == ["/memories/home", "/memories/work"]
    episode = record.units[0].episode
    assert episode is not None and episode.prompt_name == "foldering@shell"
    assert {t.name for c in episode.calls for t in c.tool_calls} == {"bash"}
    assert "mv" in episode.calls[1].tool_calls[0].arguments["command"]


@needs_sandbox
async def test_shell_foldering_that_edits_a_file_fails_the_build(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    script = Script([calls(("bash", {"command": "sed -i '$ s/$/!/' /memories/session-01.md"})),
                     text("done")])
    with pytest.raises(BuildError, match="session-01"):
        await build_foldered(conv, tmp_path, script.model(), harness="shell")
