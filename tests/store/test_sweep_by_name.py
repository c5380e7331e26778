"""The sweep of stale temporary files finds them by name, as the full walk does, without a stat."""

from __future__ import annotations

import os
from pathlib import Path

from memdir.store import Store
from memdir.store._paths import open_root
from memdir.store._tree import temp_files, walk_tree

DOC = "---\nname: {name}\ndescription: about {name}\n---\nbody\n"


def _plant(root: Path) -> dict[str, Path]:
    deep = root / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (root / ".memdir").mkdir(exist_ok=True)
    (root / ".git" / "objects").mkdir(parents=True)
    (root / ".hidden").mkdir()
    planted = {
        "top": root / ".tmp-1.part",
        "deep": deep / ".tmp-2.part",
        "hidden": root / ".hidden" / ".tmp-3.part",
        "state": root / ".memdir" / ".tmp-4.part",
        "git": root / ".git" / "objects" / ".tmp-5.part",
    }
    for path in planted.values():
        path.write_bytes(b"half a write")
    (root / "a" / ".tmp-dir.part").mkdir()  # a folder of that name is not a temporary file
    (root / "a" / ".tmp-link.part").symlink_to(root / "a" / "b")
    (deep / "kept.md").write_text(DOC.format(name="kept"))
    (deep / "tmp-6.part.md").write_text(DOC.format(name="x"))
    return planted


def test_temp_files_finds_what_the_full_walk_calls_temp(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    _plant(root)
    fd = open_root(root)
    try:
        by_name = sorted(temp_files(fd))
        full = sorted(n.parts for n in walk_tree(fd, hidden=True) if n.kind == "temp")
    finally:
        os.close(fd)
    assert by_name == full
    assert by_name == [(".hidden", ".tmp-3.part"), (".tmp-1.part",), ("a", "b", "c", ".tmp-2.part")]


def test_opening_a_store_sweeps_them_and_keeps_everything_else(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    planted = _plant(root)
    Store(root)
    assert [k for k, p in planted.items() if p.exists()] == ["state", "git"]  # not the store's
    assert (root / "a" / ".tmp-dir.part").is_dir()
    assert (root / "a" / ".tmp-link.part").is_symlink()
    assert (root / "a" / "b" / "c" / "kept.md").exists()
    assert (root / "a" / "b" / "c" / "tmp-6.part.md").exists()
