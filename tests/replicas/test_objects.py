"""The objects memdir writes itself for a merge are the ones git would write.

Checked against git: the ids git gives the same bytes (``hash-object``), the trees
``update-index`` and ``write-tree`` make from the same entries (names that sort
differently as files and as folders included), ``git fsck --strict`` on the result,
and a real merge between two replicas whose commit git reads back whole.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store._objects import commit_object, parse_tree, rebuild_tree, write_object
from memdir.store.replica import Replica

from .conftest import git

DOC = ("---\nname: alice\ndescription: Alice, a friend\n---\n# Alice\n\nphone: 1\n\n"
       "one\ntwo\nthree\nfour\n\nmail: a@x\n")
NAMES = ["a", "a.md", "a-b.md", "a/b.md", "a/c/d.md", "a0", "b c.md", "é.md", "z/a.md",
         "a.b/x.md"]


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    git("init", "-q", str(root))
    return root


def _git_tree(root: Path, files: dict[str, str], index: Path) -> str:
    env_index = {"GIT_INDEX_FILE": str(index)}
    info = "".join(f"100644 {blob}\t{path}\0" for path, blob in files.items())
    subprocess.run(["git", "update-index", "-z", "--add", "--index-info"], cwd=root,
                   input=info.encode(), env={**_env(), **env_index}, check=True)
    return subprocess.run(["git", "write-tree"], cwd=root, env={**_env(), **env_index},
                          capture_output=True, text=True, check=True).stdout.strip()


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _edit(replica: Replica, path: str, old: str, new: str) -> None:
    replica.store.write(path, replica.store.read(path).replace(old, new, 1))


def test_blobs_trees_and_commits_get_the_ids_git_gives_them(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git_dir = root / ".git"
    blobs = {name: write_object(git_dir, b"blob", f"text of {name}\n".encode())
             for name in NAMES}
    for name, blob in blobs.items():
        assert git("cat-file", "blob", blob, cwd=root) == f"text of {name}\n"
        (tmp_path / "probe").write_text(f"text of {name}\n")
        assert git("hash-object", str(tmp_path / "probe"), cwd=root).strip() == blob
    # Half the files first, through git; then the rest set by rebuild_tree, which must
    # give the tree git makes from all of them.
    first = dict(list(blobs.items())[::2])
    base = _git_tree(root, first, tmp_path / "index-a")
    expected = _git_tree(root, blobs, tmp_path / "index-b")

    def read(folder: bytes) -> bytes | None:
        spec = f"{base}:{folder.decode()}" if folder else base
        done = subprocess.run(["git", "cat-file", "tree", spec], cwd=root, env=_env(),
                              capture_output=True, check=False)
        return done.stdout if done.returncode == 0 else None

    rest = {name.encode(): (b"100644", blob) for name, blob in blobs.items() if name not in first}
    assert rebuild_tree(git_dir, base, rest, read) == expected
    commit = write_object(git_dir, b"commit", commit_object(expected, [], "merge\n\nbody\n", 1))
    assert git("log", "-1", "--format=%T %an %B", commit, cwd=root).strip() == \
        f"{expected} memdir merge\n\nbody"
    git("fsck", "--strict", "--no-dangling", cwd=root)
    assert set(parse_tree(read(b"") or b"")) <= {n.split("/")[0].encode() for n in NAMES}


def test_a_merge_of_both_sides_changes_is_written_without_git_and_reads_back(
        tmp_path: Path, remote: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir.store import _integrate

    def no_import(*args: object) -> None:
        raise AssertionError("the merge went through git fast-import")

    monkeypatch.setattr(_integrate, "_import_merge", no_import)
    one = Replica(Store(tmp_path / "one", create=True), name="one")
    one.attach(str(remote))
    one.store.create("/memories/people/alice.md", DOC)
    one.store.create("/memories/notes/deep/x.md", DOC.replace("alice", "x"))
    assert one.sync().ok
    two, _ = Replica.clone(str(remote), tmp_path / "two", name="two")
    _edit(one, "/memories/people/alice.md", "phone: 1", "phone: 2")
    _edit(one, "/memories/notes/deep/x.md", "mail: a@x", "mail: one@x")
    _edit(two, "/memories/people/alice.md", "mail: a@x", "mail: b@x")
    _edit(two, "/memories/notes/deep/x.md", "phone: 1", "phone: 9")
    assert one.sync().ok
    report = two.sync()
    assert report.ok and report.merged and not report.conflicts
    text = two.store.read("/memories/people/alice.md")
    assert "phone: 2" in text and "mail: b@x" in text
    deep = two.store.read("/memories/notes/deep/x.md")
    assert "mail: one@x" in deep and "phone: 9" in deep
    head = git("rev-parse", "HEAD", cwd=two.root).strip()
    assert len(git("log", "-1", "--format=%P", head, cwd=two.root).split()) == 2
    git("fsck", "--strict", "--no-dangling", cwd=two.root)
    assert one.sync().ok
    assert one.store.read("/memories/notes/deep/x.md") == deep
    git("fsck", "--strict", cwd=remote)


@pytest.mark.parametrize("name", ["a b.md", "ünï.md", "x:y.md"])
def test_odd_names_in_a_merge(tmp_path: Path, remote: Path, name: str) -> None:
    path = f"/memories/dir one/{name}"
    one = Replica(Store(tmp_path / "one", create=True), name="one")
    one.attach(str(remote))
    one.store.create(path, DOC)
    assert one.sync().ok
    two, _ = Replica.clone(str(remote), tmp_path / "two", name="two")
    _edit(one, path, "phone: 1", "phone: 2")
    _edit(two, path, "mail: a@x", "mail: b@x")
    assert one.sync().ok and two.sync().ok
    assert "phone: 2" in two.store.read(path) and "mail: b@x" in two.store.read(path)
    git("fsck", "--strict", "--no-dangling", cwd=two.root)
