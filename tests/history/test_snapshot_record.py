"""A new process's snapshot stages only what changed, and sees every change exactly.

``memdir history STORE snapshot`` runs in a process of its own: it has no change
feed, so it compares each file with the record the last snapshot saved (size,
nanosecond times, inode, mode) and hashes only those that differ. These tests run
the real command for the case git's own whole-second check misses (an edit in
place, size kept, modification time put back, in the second of the file's last
change), check that only changed files are hashed, and that the record is not
trusted once anything else has written git's index.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store.history import History


def _doc(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name} notes\n---\n{body}\n"


def _cli_snapshot(root: Path, message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "memdir", "history", str(root), "snapshot",
                           "--message", message], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _in_place(path: Path, word: bytes) -> None:
    """Overwrite bytes in place after the header, keeping the size and the mtime."""
    before = os.stat(path)
    with open(path, "r+b") as handle:
        data = handle.read()
        handle.seek(data.index(b"---\n", 4) + 4)
        handle.write(word)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_new_process_records_an_in_place_edit_git_alone_misses(store: Store) -> None:
    store.write("/memories/a.md", _doc("a", "granite and more words"))
    path = store.root / "a.md"
    old = os.stat(path).st_mtime_ns - 100 * 10**9
    os.utime(path, ns=(old, old))  # older than the index: git does not call it racy
    _cli_snapshot(store.root, "one")
    for attempt in range(20):
        word = f"zr{attempt:03d}".encode()
        path.chmod(os.stat(path).st_mode ^ 0o100)
        History(store).snapshot(f"mode {attempt}")  # in process: quick, the same second
        changed = os.stat(path).st_ctime_ns
        _in_place(path, word)
        _cli_snapshot(store.root, f"edit {attempt}")
        assert word.decode() in History(store).read_state(-1)["/memories/a.md"]
        if os.stat(path).st_ctime_ns // 10**9 == changed // 10**9:
            break  # the case git's check passes over was made, and was recorded
    else:
        pytest.skip("the machine was too slow to edit within one second")


def test_a_new_history_hashes_only_the_changed_files(store: Store) -> None:
    for n in range(50):
        store.write(f"/memories/f{n}.md", _doc(f"f{n}", f"body {n}"))
    old = os.stat(store.root / "f0.md").st_mtime_ns - 100 * 10**9
    for n in range(50):
        os.utime(store.root / f"f{n}.md", ns=(old, old))  # none is racy
    first = History(store)
    first.snapshot("one")
    assert first.full_stages == 1  # no record yet: git add, and a record made
    first.close()
    store.write("/memories/f7.md", _doc("f7", "changed"))
    os.unlink(store.root / "f9.md")
    (store.root / "f3.md").unlink()
    (store.root / "f3.md").mkdir()
    (store.root / "f3.md" / "inside.md").write_text(_doc("inside", "a folder took its place"))
    time.sleep(0.05)  # past the file system's clock tick of the last change: none is racy
    hashed: list[str] = []
    second = History(store)
    real = second._git

    def counting(*args: str, **kwargs: object) -> bytes:
        if args[:1] == ("hash-object",):
            hashed.extend(kwargs["input"].decode().split())  # type: ignore[union-attr]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    second._git = counting  # type: ignore[method-assign]
    second.snapshot("two")
    assert second.full_stages == 0
    assert sorted(p.strip('"') for p in hashed) == ["f3.md/inside.md", "f7.md"]
    state = second.read_state(-1)
    assert "changed" in state["/memories/f7.md"] and "/memories/f9.md" not in state
    assert "/memories/f3.md/inside.md" in state and "/memories/f3.md" not in state
    assert second.verify().ok
    second.close()


def test_the_record_is_not_trusted_after_another_git_command_wrote_the_index(
        store: Store) -> None:
    store.write("/memories/a.md", _doc("a", "alpha"))
    store.write("/memories/b.md", _doc("b", "beta"))
    History(store).snapshot("one")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "rm", "-q", "--cached", "b.md"], cwd=store.root, env=env,
                   check=True)  # a person's git command: the index no longer holds b.md
    again = History(store)
    again.snapshot("two")
    assert again.full_stages == 1  # staged whole, so the index is repaired
    assert set(again.read_state(-1)) == {"/memories/a.md", "/memories/b.md"}


def test_a_long_lived_history_keeps_the_record_for_the_next_process(store: Store) -> None:
    store.write("/memories/a.md", _doc("a", "alpha"))
    server = History(store)
    for step in range(4):  # the first two stage the whole tree's changes, then the feed
        store.write(f"/memories/n{step}.md", _doc(f"n{step}", "new"))
        server.snapshot(f"step {step}")
    assert server.full_stages == 1
    server.close()
    store.write("/memories/late.md", _doc("late", "after the server"))
    fresh = History(store)
    fresh.snapshot("after")
    assert fresh.full_stages == 0  # the feed's snapshots kept the record up to date
    assert "/memories/late.md" in fresh.read_state(-1)
    assert fresh.verify().ok
    fresh.close()
