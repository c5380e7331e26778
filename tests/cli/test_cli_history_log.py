"""The two forms of ``memdir history STORE log`` name each commit's writer and replica alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memdir.store import Store
from memdir.store.replica import Replica


def _log(root: Path, *extra: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "memdir", "history", str(root), "log", *extra],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return out.splitlines()


def _line_of(lines: list[str], commit: str) -> str:
    (line,) = [ln for ln in lines if commit[:10] in ln]
    return line


def test_a_sync_without_writers_reads_the_same_in_both_forms(tmp_path: Path) -> None:
    remote = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    replica = Replica(Store(tmp_path / "laptop", create=True), name="laptop", timeout=20)
    replica.attach(str(remote))
    replica.store.create("/memories/a.md", "---\nname: a\ndescription: A\n---\n1\n")
    replica.sync()  # no writer named: the commit carries only the replica's trailer
    replica.store.create("/memories/b.md", "---\nname: b\ndescription: B\n---\n1\n")
    replica.sync(writers=["sam"])
    root = replica.root
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD", "HEAD~1"],
                          capture_output=True, text=True, check=True).stdout.split()
    plain, every = _log(root), _log(root, "--all")
    assert _line_of(plain, head[1]).endswith("  (on laptop)")
    assert _line_of(every, head[1]).endswith("  (on laptop)")  # was "(by memdir on laptop)"
    assert _line_of(plain, head[0]).endswith("  (by sam on laptop)")
    assert _line_of(every, head[0]).endswith("  (by sam on laptop)")


def test_a_person_who_commits_with_git_is_named_by_the_full_log(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    store.create("/memories/a.md", "---\nname: a\ndescription: A\n---\n1\n")
    Replica(store, name="laptop").history.snapshot("first")
    (store.root / "a-note.md").write_text("by hand\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "a@example.org",
           "GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": "a@example.org"}
    subprocess.run(["git", "-C", str(store.root), "add", "a-note.md"], check=True, env=env)
    subprocess.run(["git", "-C", str(store.root), "commit", "-qm", "note"], check=True, env=env)
    assert _log(store.root, "--all")[0].endswith("  note  (by Alice)")
