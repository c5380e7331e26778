"""The foldered build: moves only, byte identity verified, moves and folders recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.builders import (
    BuildError,
    build_foldered,
    verbatim_files,
    verify_foldering,
)
from memdir.sample import load_sample_conversation
from memdir.store import Frontmatter, render_file
from scripted import Script, calls, text

MOVES = {
    "/memories/session-01.md": "/memories/life/home/session-01.md",
    "/memories/session-02.md": "/memories/life/home/session-02.md",
    "/memories/session-03.md": "/memories/work/session-03.md",
}


def _folder_script() -> Script:
    return Script([
        calls(("view", {"path": "/memories"}),
              ("grep", {"pattern": "moved|job", "path": "/memories"})),
        calls(*(("rename", {"old_path": old, "new_path": new}) for old, new in MOVES.items())),
        # a file may not change its name, and the folder set has no create
        calls(("rename", {"old_path": "/memories/session-04.md",
                          "new_path": "/memories/work/renamed.md"}),
              ("create", {"path": "/memories/x.md", "file_text": "---\nname: x\n---\n"})),
        text("Folders: life/home (2 files), work (1 file); session-04 stays at the top."),
    ])


async def test_foldering_moves_files_and_verifies_every_byte(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    script = _folder_script()
    built = await build_foldered(conv, tmp_path, script.model())
    script.assert_done()
    record = built.record
    assert {(m.old, m.new) for m in record.moves} == set(MOVES.items())
    assert record.folders == ["/memories/life", "/memories/life/home", "/memories/work"]
    dump = dict(verbatim_files(conv))
    for old, new in MOVES.items():
        assert built.store.read(new) == dump[old]
    assert sorted(record.files) == sorted([*MOVES.values(), "/memories/session-04.md"])
    unit = record.units[0]
    assert (unit.kind, unit.rounds, unit.tool_calls, unit.tool_errors) == ("episode", 4, 7, 2)
    assert record.tool_errors == 2 and record.model_calls == 4
    assert record.prompt_name == "foldering"
    assert [s.message for s in built.history.steps()] == ["verbatim dump", "episode 1: foldering"]
    # the model read the turn that counts the files and had only the folder tools
    first_call = script.seen[0]
    assert "4 session files" in first_call[1].text
    results = [m for m in script.seen[3] if m.role == "tool"]
    errors = [m.content for m in results if m.error is not None]
    assert len(errors) == 2
    assert any("keeps its file name" in str(e) for e in errors)
    assert any("create" in str(e) for e in errors)


async def test_a_tampered_store_fails_verification(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    built = await build_foldered(conv, tmp_path, _folder_script().model())
    dump = verbatim_files(conv)
    assert verify_foldering(built.store, dump).moves == built.record.moves
    built.store.edit("/memories/work/session-03.md", lambda t: t.replace("\n\n", "\n", 1))
    extra = render_file(Frontmatter(name="summary", description="A summary"), "Short.\n")
    built.store.create("/memories/summary.md", extra)
    with pytest.raises(BuildError) as err:
        verify_foldering(built.store, dump)
    message = str(err.value)
    assert "changed: /memories/session-03.md (now /memories/work/session-03.md)" in message
    assert "not from the dump: /memories/summary.md" in message
    built.store.delete("/memories/summary.md")
    built.store.delete("/memories/session-04.md")
    with pytest.raises(BuildError, match="missing: /memories/session-04.md"):
        verify_foldering(built.store, dump)
    # the cached build is checked again before it is reused
    again = Script([])
    with pytest.raises(BuildError, match="not the verbatim dump"):
        await build_foldered(conv, tmp_path, again.model())
    assert again.used == 0


async def test_a_duplicated_file_is_caught(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    built = await build_foldered(conv, tmp_path, _folder_script().model())
    copy = built.store.resolve("/memories/session-04.md").host.read_bytes()
    (built.store.root / "work" / "session-04.md").write_bytes(copy)
    with pytest.raises(BuildError, match="duplicated: /memories/work/session-04.md"):
        verify_foldering(built.store, verbatim_files(conv))


async def test_a_model_failure_leaves_the_dump_and_resumes(tmp_path: Path) -> None:
    conv = load_sample_conversation()
    failing = Script([calls(*(("rename", {"old_path": o, "new_path": n})
                              for o, n in MOVES.items())), RuntimeError("gateway timeout")])
    with pytest.raises(BuildError, match="episode 1 .*gateway timeout"):
        await build_foldered(conv, tmp_path, failing.model())
    folder = next(tmp_path.iterdir())
    assert sorted(p.name for p in (folder / "memories").glob("*.md")) == [
        "session-01.md", "session-02.md", "session-03.md", "session-04.md"]
    built = await build_foldered(conv, tmp_path, _folder_script().model())
    assert len(built.record.moves) == 3 and built.folder == folder
