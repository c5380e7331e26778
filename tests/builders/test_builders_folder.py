"""The build folder: start, reset to the last snapshot, repair a missing snapshot, refuse
an inconsistent folder; and the key's sensitivity to every configuration item."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.builders import (
    BuildError,
    BuildFolder,
    BuildSpec,
    BuildState,
    UnitRecord,
    builder_role,
)
from memdir.conversation import Conversation
from memdir.sample import load_sample_conversation
from memdir.store import Frontmatter, render_file

NOTE = render_file(Frontmatter(name="a", description="A note"), "First.\n")


def _spec(conv: Conversation, **changes: object) -> BuildSpec:
    role = builder_role("curated", conv).with_(**changes)
    return BuildSpec.make("curated", conv, "mockllm/model", role, chunk_tokens=4000)


def _open(cache: Path, spec: BuildSpec) -> BuildFolder:
    folder = BuildFolder(cache, spec)
    with folder.open(lambda store: store.create("/memories/a.md", NOTE), "seed"):
        pass
    return folder


def test_reset_undoes_every_kind_of_change(tmp_path: Path) -> None:
    folder = _open(tmp_path, _spec(load_sample_conversation()))
    store = folder.store
    store.edit("/memories/a.md", lambda t: t.replace("First.", "Changed."))
    store.create("/memories/deep/b.md", render_file(Frontmatter(name="b", description="B"),
                                                    "x\n"))
    (store.root / ".tmp-a.md.part").write_bytes(b"half a write")
    (store.root / "notes.txt").write_text("stray")
    folder.reset()
    assert store.read("/memories/a.md") == NOTE
    assert sorted(p.name for p in store.root.iterdir()) == [".git", ".memdir", "a.md"]
    store.delete("/memories/a.md")
    folder.reset()
    assert store.read("/memories/a.md") == NOTE


def test_a_recorded_unit_without_its_snapshot_is_snapshotted_on_resume(tmp_path: Path) -> None:
    spec = _spec(load_sample_conversation())
    folder = _open(tmp_path, spec)
    # the unit finished and its record was saved; the process died before the snapshot
    folder.store.create("/memories/b.md", NOTE.replace("name: a", "name: b"))
    state = BuildState.model_validate_json(folder.state_path.read_text())
    state.units.append(UnitRecord(kind="chunk", index=1, label="Session 1"))
    folder.state_path.write_text(state.model_dump_json())
    again = BuildFolder(tmp_path, spec)
    with again.open(lambda store: None, "seed"):
        steps = again.history.steps()
        assert [s.message for s in steps] == ["seed", "chunk 1: Session 1"]
        assert set(again.history.read_state(-1)) == {"/memories/a.md", "/memories/b.md"}
    # a history that disagrees with build.json is refused, not guessed at
    again.history.snapshot("stray snapshot")
    again.history.snapshot("another")
    with pytest.raises(BuildError, match="lists 1 finished units but the history has 4"):
        with BuildFolder(tmp_path, spec).open(lambda store: None, "seed"):
            pass


def test_every_configuration_item_changes_the_key() -> None:
    conv = load_sample_conversation()
    base = _spec(conv)
    role = builder_role("curated", conv)
    others = [
        _spec(conv, max_rounds=7), _spec(conv, max_tokens=1000),
        _spec(conv, reasoning_effort="low"), _spec(conv, temperature=0.0),
        _spec(conv, prompt="management-blocks"),
        BuildSpec.make("curated", conv, "openai/gpt-5.4-mini", role, chunk_tokens=4000),
        BuildSpec.make("curated", conv, "mockllm/model", role, chunk_tokens=300),
        BuildSpec.make("curated", conv.model_copy(update={"sessions": conv.sessions[:-1]}),
                       "mockllm/model", role, chunk_tokens=4000),
    ]
    keys = {base.key, *(o.key for o in others)}
    assert len(keys) == len(others) + 1
    assert _spec(conv).key == base.key and len(base.key) == 64
    assert base.folder_name.startswith("sample__curated__")
