"""A store's git history: snapshots, exact reconstruction, diffs and replay checks."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store.history import History, HistoryError


def _doc(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name} notes\n---\n{body}\n"


@pytest.fixture
def history(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    # A machine where git was never configured: no global or system config at all.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    h = History(store)
    h.init()
    store.create("/memories/a.md", _doc("a", "first"))
    h.snapshot("chunk 1")
    store.create("/memories/people/b.md", _doc("b", "# Work\nnurse"))
    store.write("/memories/a.md", _doc("a", "first, edited"))
    h.snapshot("chunk 2")
    h.snapshot("chunk 3")  # nothing changed: still a step
    store.delete("/memories/a.md")
    h.snapshot("chunk 4")
    return h


def test_steps_are_recorded_in_order(history: History) -> None:
    steps = history.steps()
    assert [s.message for s in steps] == ["chunk 1", "chunk 2", "chunk 3", "chunk 4"]
    assert [s.index for s in steps] == [0, 1, 2, 3]
    assert steps[1].tree == steps[2].tree != steps[3].tree
    assert history.step(-1) == steps[3]
    assert history.step(steps[1].commit[:12]) == steps[1]


def test_read_state_and_checkout_rebuild_past_states(history: History, tmp_path: Path) -> None:
    store = history.store
    assert history.read_state(0) == {"/memories/a.md": _doc("a", "first")}
    assert history.read_state(1) == {
        "/memories/a.md": _doc("a", "first, edited"),
        "/memories/people/b.md": _doc("b", "# Work\nnurse"),
    }
    copy = history.checkout_to(1, tmp_path / "copy")
    assert copy.files() == ["/memories/people/b.md", "/memories/a.md"]
    assert copy.read("/memories/a.md") == _doc("a", "first, edited")
    # the live store is untouched: still the last state, nothing staged or modified
    assert store.files() == ["/memories/people/b.md"]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=store.root,
                            capture_output=True, text=True, check=True)
    assert status.stdout == ""


def test_checkout_refuses_a_non_empty_folder(history: History, tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x.md").write_text("x")
    with pytest.raises(HistoryError, match="not empty"):
        history.checkout_to(0, tmp_path / "busy")


def test_diff_names_added_removed_and_modified(history: History) -> None:
    change = history.diff(0, 1)
    assert change.added == ["/memories/people/b.md"]
    assert change.modified == ["/memories/a.md"]
    assert change.removed == []
    assert "-first\n+first, edited" in change.patch
    assert history.diff(1, 2).empty
    assert history.diff(2, 3).removed == ["/memories/a.md"]


def test_verify_replays_every_step(history: History) -> None:
    report = history.verify()
    assert report.checked == 4 and report.ok


class _LossyHistory(History):
    """Rebuilds states but drops one file: verify must notice."""

    def _apply(self, folder: Path, changed: Mapping[str, str | None],
               files: dict[str, str], note: Callable[[str], None] | None = None) -> None:
        super()._apply(folder, changed, files, note)
        for path in sorted(folder.rglob("b.md")):
            path.unlink()


def test_verify_catches_a_wrong_reconstruction(history: History) -> None:
    report = _LossyHistory(history.store).verify()
    assert report.checked == 4
    assert [m.split(" ")[1] for m in report.mismatches] == ["1", "2", "3"]


def test_plain_git_works_and_memdir_state_is_excluded(history: History) -> None:
    root = history.store.root
    log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True,
                         text=True, check=True)
    assert log.stdout.split("\n")[:2] == ["chunk 4", "chunk 3"]
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.split()
    assert tracked == ["people/b.md"]
    assert (root / ".memdir").is_dir()
    # the repository is hidden from the store's own listing
    assert all(".git" not in e.path for e in history.store.walk())


def test_bad_requests_say_what_to_do(store: Store, history: History) -> None:
    with pytest.raises(HistoryError, match="no step 9"):
        history.step(9)
    with pytest.raises(HistoryError, match="message"):
        history.snapshot("  ")
    with pytest.raises(HistoryError, match="names no step"):
        history.step("deadbeefdeadbeef")
    other = Store(store.root.parent / "other", create=True)
    with pytest.raises(HistoryError, match="no history yet"):
        History(other).steps()


def test_init_is_idempotent(history: History) -> None:
    history.init()
    exclude = (history.store.root / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.memdir/") == 1
    assert len(history.steps()) == 4


def test_restore_puts_the_live_store_back_to_a_step(history: History, tmp_path: Path) -> None:
    import os

    store = history.store
    store.write("/memories/later.md", _doc("later", "made after"))
    (store.root / "people" / "notes.txt").write_text("a stray")
    (store.root / "people" / "link.md").symlink_to(tmp_path)
    os.mkfifo(store.root / "pipe.md")
    (store.root / "deep" / "er").mkdir(parents=True)
    step = history.restore(1)
    assert step.message == "chunk 2"
    assert store.files() == ["/memories/people/b.md", "/memories/a.md"]
    assert store.read("/memories/a.md") == _doc("a", "first, edited")
    assert sorted(p.name for p in store.root.iterdir()) == [".git", ".memdir", "a.md", "people"]
    assert sorted(p.name for p in (store.root / "people").iterdir()) == ["b.md"]
    assert tmp_path.is_dir()
    assert history.restore(1) == step and history.verify().ok


def test_planted_ignore_and_attribute_files_change_nothing_recorded(history: History) -> None:
    # What `echo '*' > /memories/.gitignore` through bash leaves: git would skip every
    # new file, and a planted .gitattributes would rewrite line endings in blobs.
    root = history.store.root
    (root / ".gitignore").write_text("*\n")
    (root / ".gitattributes").write_text("* text eol=crlf\n*.md filter=lfs\n")
    (root / "people" / ".gitignore").write_text("*.md\n")
    history.store.create("/memories/people/c.md", _doc("c", "line one\nline two"))
    history.snapshot("chunk 5")
    state = history.read_state(-1)
    assert state["/memories/people/c.md"] == _doc("c", "line one\nline two")
    assert {"/memories/.gitignore", "/memories/.gitattributes",
            "/memories/people/.gitignore"} <= set(state)
    assert history.verify().ok
    # A restore of that step keeps the file the ignore rules would have dropped.
    history.store.delete("/memories/people/c.md")
    history.restore(-1)
    assert (root / "people" / "c.md").read_bytes() == _doc("c", "line one\nline two").encode()


def test_user_git_config_does_not_reach_snapshots(
    history: History, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user configuration that would ignore every file and convert line endings.
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "ignore").write_text("*\n")
    (home / ".gitconfig").write_text(
        f"[core]\n\texcludesFile = {home / 'ignore'}\n\tautocrlf = true\n"
    )
    monkeypatch.setenv("HOME", str(home))
    history.store.create("/memories/d.md", _doc("d", "kept"))
    history.snapshot("chunk 5")
    assert history.read_state(-1)["/memories/d.md"] == _doc("d", "kept")


def test_verify_names_a_file_a_snapshot_left_out(history: History) -> None:
    # Reproduce what the old snapshot did under a planted .gitignore: a commit, taken
    # after the file was written, that does not hold it.
    root = history.store.root
    history.store.create("/memories/e.md", _doc("e", "written before the snapshot"))
    later = "@4000000000 +0000"  # 2096: long after the file was written
    env = {"GIT_AUTHOR_DATE": later, "GIT_COMMITTER_DATE": later,
           "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "lossy"], cwd=root, check=True,
                   env={**os.environ, **env})
    report = history.verify()
    assert not report.ok
    assert any(m.startswith("/memories/e.md is missing from step 4") for m in report.mismatches)
    # A change made after the newest snapshot is pending, not a mismatch.
    history.snapshot("chunk 6")
    history.store.create("/memories/f.md", _doc("f", "new"))
    assert history.verify().ok


def test_a_tree_a_thousand_levels_deep_is_verified_rebuilt_and_restored(
    history: History, tmp_path: Path, deep_tree: Callable[..., str]
) -> None:
    store = history.store
    deep = deep_tree(store.root, 1000, "x.md", _doc("x", "deep"))
    history.snapshot("deep")
    assert history.read_state(-1)[deep] == _doc("x", "deep")
    assert history.verify().ok
    rebuilt = history.checkout_to(-1, tmp_path / "rebuilt")
    assert deep in rebuilt.capture()[0]
    rebuilt.delete("/memories/d")  # the fixture removes only the tree it made
    store.reset_to({})
    history.restore(-1)
    assert store.capture()[0][deep] == _doc("x", "deep").encode()


def test_a_git_link_or_pointer_file_at_the_root_is_refused(store: Store, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    before = sorted(p.name for p in (elsewhere / ".git").iterdir())
    for plant in ("link", "pointer"):
        dotgit = store.root / ".git"
        if plant == "link":
            dotgit.symlink_to(elsewhere / ".git")
        else:
            dotgit.write_text(f"gitdir: {elsewhere / '.git'}\n")
        with pytest.raises(HistoryError, match="not a folder memdir made"):
            History(store).snapshot("chunk 1")
        dotgit.unlink()
    assert sorted(p.name for p in (elsewhere / ".git").iterdir()) == before
    assert not (elsewhere / ".git" / "info" / "attributes").exists()


def test_a_store_inside_another_repository_never_reaches_it(tmp_path: Path) -> None:
    outer = tmp_path / "project"
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    store = Store(outer / "memories", create=True)
    store.create("/memories/a.md", _doc("a", "first"))
    history = History(store)
    assert not history.initialized
    with pytest.raises(HistoryError, match="no history yet"):
        history.steps()
    history.snapshot("chunk 1")
    assert (store.root / ".git").is_dir()
    outer_status = subprocess.run(["git", "status", "--porcelain"], cwd=outer,
                                  capture_output=True, text=True, check=True).stdout
    assert "memories/" in outer_status  # untracked there; nothing was added to it
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=outer,
                          capture_output=True).returncode != 0


def test_hooks_and_monitors_in_the_repository_config_never_run(
    history: History, tmp_path: Path
) -> None:
    # Someone who can write .git/config (not an agent: the shell hides .git) names
    # programs for git to run; memdir's own git calls turn each of them off.
    ran = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {ran}\n")
    script.chmod(0o755)
    config = history.store.root / ".git" / "config"
    config.write_text(config.read_text() + f"[core]\n\tfsmonitor = {script}\n"
                      f"[diff]\n\texternal = {script}\n")
    hooks = history.store.root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text(script.read_text())
    (hooks / "pre-commit").chmod(0o755)
    history.store.create("/memories/c.md", _doc("c", "new"))
    history.snapshot("chunk 5")
    history.diff(0, -1)
    assert history.verify().ok
    assert not ran.exists()


def test_verify_replays_files_and_folders_trading_places_and_modes(store: Store) -> None:
    # verify stopped with NotADirectoryError when a folder became a file (its old files'
    # removals came after the new file was written), and reported a mismatch for any
    # executable file (the replay wrote every file 0600, the step recorded 100755).
    root = store.root
    history = History(store)
    (root / "x").write_text("file\n")
    (root / "y" / "b").mkdir(parents=True)
    (root / "y" / "a.md").write_text("a\n")
    (root / "y" / "b" / "c.md").write_text("c\n")
    history.snapshot("one")
    (root / "x").unlink()
    (root / "x").mkdir()
    (root / "x" / "in.md").write_text("in\n")
    shutil.rmtree(root / "y")
    (root / "y").write_text("now a file\n")
    history.snapshot("two")
    shutil.rmtree(root / "x")
    (root / "x").write_text("a file again\n")
    (root / "y").unlink()
    (root / "y" / "b").mkdir(parents=True)
    (root / "y" / "b" / "deep.md").write_text("d\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    history.snapshot("three")
    (root / "run.sh").chmod(0o644)
    history.snapshot("four")
    report = history.verify()
    assert report.checked == 4 and report.ok, report.mismatches
