"""Writes: atomic, size-capped, refusing stale writers, safe across processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memdir.store import (
    ConflictError,
    FileExistsInStoreError,
    FileTooLargeError,
    NotFoundError,
    PathError,
    Store,
    atomic_write,
    digest_text,
)

NOTE = "---\nname: note\ndescription: A note\n---\nbody\n"


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".tmp-") or p.suffix == ".part"]


def test_write_replaces_content_and_leaves_no_temp_files(store: Store) -> None:
    for index in range(20):
        store.write("/memories/a/note.md", f"{NOTE}{index}\n")
    assert store.read("/memories/a/note.md").endswith("19\n")
    assert _leftovers(store.root) == []


def test_atomic_write_creates_parents_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "x" / "y" / "f.md"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.md"]


def test_atomic_write_failure_keeps_old_content_and_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        atomic_write(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md"]


def test_write_returns_the_version(store: Store) -> None:
    version = store.write("/memories/note.md", NOTE)
    assert version == digest_text(NOTE) == store.version("/memories/note.md")
    assert store.version("/memories/missing.md") is None


def test_size_cap(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True, max_file_bytes=100)
    store.write("/memories/note.md", NOTE)
    with pytest.raises(FileTooLargeError, match="cap of 100 bytes"):
        store.write("/memories/note.md", NOTE + "x" * 200)
    assert store.read("/memories/note.md") == NOTE
    # The cap counts UTF-8 bytes, not characters.
    with pytest.raises(FileTooLargeError):
        store.write("/memories/wide.md", "\u00e9" * 60)


def test_create_refuses_an_existing_file(store: Store) -> None:
    store.create("/memories/note.md", NOTE)
    with pytest.raises(FileExistsInStoreError, match="already exists"):
        store.create("/memories/note.md", "other")
    assert store.read("/memories/note.md") == NOTE


def test_stale_expect_is_a_conflict(store: Store) -> None:
    first = store.write("/memories/note.md", NOTE)
    store.write("/memories/note.md", NOTE + "a\n", expect=first)
    with pytest.raises(ConflictError, match="changed since you read it"):
        store.write("/memories/note.md", NOTE + "b\n", expect=first)
    assert store.read("/memories/note.md") == NOTE + "a\n"
    with pytest.raises(ConflictError, match="deleted"):
        store.write("/memories/gone.md", NOTE, expect=first)


def test_edit_aborts_when_change_raises(store: Store) -> None:
    store.write("/memories/note.md", NOTE)

    def boom(text: str) -> str:
        raise ValueError("no")

    with pytest.raises(ValueError):
        store.edit("/memories/note.md", boom)
    assert store.read("/memories/note.md") == NOTE


def test_write_refuses_folder_targets_and_files_as_folders(store: Store) -> None:
    store.write("/memories/a/note.md", NOTE)
    with pytest.raises(PathError, match="cannot hold other files"):
        store.write("/memories/a/note.md/b.md", NOTE)
    (store.root / "dir.md").mkdir()
    with pytest.raises(PathError, match="is a folder"):
        store.write("/memories/dir.md", NOTE)


def test_read_errors(store: Store) -> None:
    with pytest.raises(NotFoundError, match="View /memories"):
        store.read("/memories/nope/x.md")
    (store.root / "bin.md").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(Exception, match="not valid UTF-8"):
        store.read("/memories/bin.md")


def test_delete_and_prune(store: Store) -> None:
    store.write("/memories/a/b/c.md", NOTE)
    store.delete("/memories/a/b/c.md")
    assert not (store.root / "a").exists()
    with pytest.raises(PathError, match="cannot be deleted"):
        store.delete("/memories")
    with pytest.raises(NotFoundError):
        store.delete("/memories/a.md")


def test_rename_rules(store: Store) -> None:
    store.write("/memories/a/x.md", NOTE)
    store.write("/memories/b/y.md", NOTE)
    with pytest.raises(FileExistsInStoreError):
        store.rename("/memories/a/x.md", "/memories/b/y.md")
    with pytest.raises(PathError, match="inside itself"):
        store.rename("/memories/a", "/memories/a/inner")
    with pytest.raises(PathError, match="keep a .md name"):
        store.rename("/memories/a/x.md", "/memories/c")
    with pytest.raises(PathError, match="cannot be moved"):
        store.rename("/memories", "/memories/z")
    store.rename("/memories/a", "/memories/c/d")
    assert store.files() == ["/memories/b/y.md", "/memories/c/d/x.md"]
    assert not (store.root / "a").exists()


def test_walk_lists_descriptions_and_skips_hidden_and_strays(store: Store) -> None:
    store.write("/memories/p/alice.md", "---\nname: alice\ndescription: Alice, a friend\n---\n")
    (store.root / "p" / "notes.txt").write_text("x")
    (store.root / ".hidden").mkdir()
    (store.root / ".hidden" / "h.md").write_text("x")
    entries = store.walk()
    assert [(e.path, e.is_dir, e.depth) for e in entries] == [
        ("/memories/p", True, 1),
        ("/memories/p/alice.md", False, 2),
    ]
    assert entries[1].description == "Alice, a friend"
    assert store.walk(describe=False)[1].description is None
    assert [p.name for p in store.stray_files()] == ["notes.txt"]


_WORKER = textwrap.dedent(
    """
    import sys
    from memdir.store import Store

    store = Store(sys.argv[1])
    for _ in range(int(sys.argv[2])):
        store.edit("/memories/counter.md", lambda t: t.rsplit("\\n", 2)[0] + "\\n"
                   + str(int(t.rsplit("\\n", 2)[1]) + 1) + "\\n")
    """
)


def test_concurrent_processes_lose_no_update(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    store.write("/memories/counter.md", "---\nname: counter\ndescription: c\n---\n0\n")
    workers, increments = 3, 30
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(store.root), str(increments)])
        for _ in range(workers)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * workers
    final = store.read("/memories/counter.md").rsplit("\n", 2)[1]
    assert int(final) == workers * increments
    assert _leftovers(store.root) == []


def test_read_keeps_line_endings_exactly(store: Store) -> None:
    data = "---\r\nname: crlf\r\ndescription: d\r\n---\r\nold\r\nlone\rcr\n"
    (store.root / "crlf.md").write_bytes(data.encode())
    assert store.read("/memories/crlf.md") == data
    store.edit("/memories/crlf.md", lambda text: text.replace("old", "new"))
    assert (store.root / "crlf.md").read_bytes() == data.replace("old", "new").encode()
