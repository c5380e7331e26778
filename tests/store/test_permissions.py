"""Issue 19, item 10: memories are personal data, so what memdir makes is its owner's only.

New memory files are 0600 and new folders 0700, exactly, whatever the umask: the
store root memdir creates (and its missing parents), its state folder, every
folder made on the way to a file, the temporary file of an atomic write, and
what a restore from history puts back. The SDK's reference tool makes files 0600
(less the umask) and folders 0700 too. An existing file keeps its bits when it
is edited (the reference resets them to 0600); see docs/anthropic.md.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool

from memdir.store import FILE_MODE, FOLDER_MODE, Store
from memdir.store._paths import open_root, write_temp_at
from memdir.tools.anthropic import MemoryToolAdapter

DOC = "---\nname: {name}\ndescription: A note\n---\nbody\n"


@pytest.fixture(params=[0o000, 0o022, 0o077], ids=["umask-000", "umask-022", "umask-077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _modes(root: Path) -> dict[str, int]:
    """Every entry's permission bits below ``root``, hidden ones included."""
    return {str(p.relative_to(root)): _mode(p) for p in sorted(root.rglob("*"))}


def test_a_new_store_and_its_parents_are_the_owners_only(tmp_path: Path, umask: int) -> None:
    store = Store(tmp_path / "a" / "b" / "memories", create=True)
    assert [_mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", store.root)] == [
        FOLDER_MODE] * 3
    assert _mode(store.root / ".memdir") == FOLDER_MODE
    with store.locked():
        assert _mode(store.root / ".memdir" / "lock") == FILE_MODE


def test_an_existing_folder_given_as_root_is_left_as_it_is(tmp_path: Path, umask: int) -> None:
    (tmp_path / "mine").mkdir()
    os.chmod(tmp_path / "mine", 0o755)
    Store(tmp_path / "mine", create=True)
    assert _mode(tmp_path / "mine") == 0o755


def test_files_and_folders_the_store_writes(tmp_path: Path, umask: int) -> None:
    store = Store(tmp_path / "memories", create=True)
    store.write("/memories/people/work/alice.md", DOC.format(name="alice"))
    store.write("/memories/people/bob.md", DOC.format(name="bob"))
    store.rename("/memories/people/work/alice.md", "/memories/team/alice.md")
    store.edit("/memories/team/alice.md", lambda text: text + "more\n")
    modes = _modes(store.root)
    assert modes["people"] == modes["team"] == FOLDER_MODE
    assert modes["team/alice.md"] == modes["people/bob.md"] == FILE_MODE


def test_the_temporary_file_of_an_atomic_write_is_the_owners_only(tmp_path: Path,
                                                                   umask: int) -> None:
    fd = open_root(tmp_path)
    try:
        name = write_temp_at(fd, b"secret", FILE_MODE)
        assert _mode(tmp_path / name) == FILE_MODE
    finally:
        os.close(fd)


def test_an_edit_keeps_the_bits_the_owner_chose(tmp_path: Path, umask: int) -> None:
    store = Store(tmp_path / "memories", create=True)
    store.write("/memories/shared.md", DOC.format(name="shared"))
    os.chmod(store.root / "shared.md", 0o640)
    store.write("/memories/shared.md", DOC.format(name="shared") + "more\n")
    store.rename("/memories/shared.md", "/memories/x/shared.md")
    assert _mode(store.root / "x" / "shared.md") == 0o640


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_restore_from_history_puts_back_owner_only_files(tmp_path: Path, umask: int) -> None:
    from memdir.store.history import History

    store = Store(tmp_path / "memories", create=True)
    store.write("/memories/deep/er/a.md", DOC.format(name="a"))
    history = History(store)
    history.snapshot("one")
    store.delete("/memories/deep")
    history.restore(0)
    modes = _modes(store.root)
    assert (modes["deep"], modes["deep/er"], modes["deep/er/a.md"]) == (
        FOLDER_MODE, FOLDER_MODE, FILE_MODE)


def _visible_modes(root: Path) -> dict[str, int]:
    return {k: v for k, v in _modes(root).items() if not k.startswith(".")}


def test_anthropic_profile_makes_what_the_reference_makes(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        reference = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path / "ref"))
        store = Store(tmp_path / "ours" / "memories", create=True)
        adapter = MemoryToolAdapter(store)
        commands = [
            {"command": "create", "path": "/memories/a/b/notes.txt", "file_text": "one\n"},
            {"command": "str_replace", "path": "/memories/a/b/notes.txt", "old_str": "one",
             "new_str": "two"},
            {"command": "insert", "path": "/memories/a/b/notes.txt", "insert_line": 1,
             "insert_text": "three"},
            {"command": "rename", "old_path": "/memories/a/b/notes.txt",
             "new_path": "/memories/c/d/notes.txt"},
            {"command": "create", "path": "/memories/top.md", "file_text": "x"},
        ]
        for command in commands:
            reference.call(command)
            result = adapter.handle_sync(
                {"type": "tool_use", "id": "t", "name": "memory", "input": command})
            assert not result["is_error"], result
    finally:
        os.umask(old)
    ours = _visible_modes(store.root)
    assert ours == _visible_modes(tmp_path / "ref" / "memories")
    assert ours == {"a": 0o700, "a/b": 0o700, "c": 0o700, "c/d": 0o700,
                    "c/d/notes.txt": 0o600, "top.md": 0o600}
    assert _mode(store.root) == _mode(tmp_path / "ref" / "memories") == 0o700
