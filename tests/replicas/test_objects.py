"""The objects memdir writes itself for a merge are the ones git would write.

Checked against git: the ids git gives the same bytes (``hash-object``), the trees
``update-index`` and ``write-tree`` make from the same entries (names that sort
differently as files and as folders included), ``git fsck --strict`` on the result,
and a real merge between two replicas whose commit git reads back whole.
"""

from __future__ import annotations

import subprocess
import zlib
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


def test_loose_objects_read_here_are_what_git_reads(tmp_path: Path) -> None:
    from memdir.store._objects import read_loose, read_spec

    root = _repo(tmp_path)
    names = [n for n in NAMES if n != "a"]  # "a" is a folder here
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n" + DOC)
    git("add", "-A", cwd=root)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one\n\nbody é", cwd=root)
    commit = git("rev-parse", "HEAD", cwd=root).strip()
    tree = git("rev-parse", "HEAD^{tree}", cwd=root).strip()
    git_dir = root / ".git"
    specs = [commit, tree, *(f"{commit}:{n}" for n in names), *(f"{tree}:{n}" for n in names),
             f"{tree}:a", f"{tree}:a/c", f"{commit}:"]
    for spec in specs:
        found = read_spec(git_dir, spec)
        assert found is not None, spec
        kind = git("cat-file", "-t", spec, cwd=root).strip()
        data = subprocess.run(["git", "cat-file", kind, spec], cwd=root, env=_env(),
                              capture_output=True, check=True).stdout
        assert found == (kind, data), spec
    # Names git has no object for, and a path through a file, are missing as in git.
    for spec in (f"{tree}:nothing.md", f"{tree}:a.md/x", f"{tree}:z/nothing/x.md"):
        assert read_spec(git_dir, spec) == ("missing", b""), spec
    # What is not loose is left to git: a packed object, a damaged one, another form.
    blob = git("rev-parse", f"{commit}:a.md", cwd=root).strip()
    damaged = git_dir / "objects" / blob[:2] / blob[2:]
    damaged.chmod(0o644)
    whole = damaged.read_bytes()
    damaged.write_bytes(whole[:-3])  # cut short
    assert read_loose(git_dir, blob) is None
    other = zlib.compress(zlib.decompress(whole).replace(b"phone: 1", b"phone: 2"))
    damaged.write_bytes(other)  # bytes that are not the ones its name hashes
    assert read_loose(git_dir, blob) is None
    damaged.write_bytes(whole)
    assert read_spec(git_dir, "HEAD") is None and read_spec(git_dir, "0" * 40) is None
    git("gc", "-q", "--prune=now", cwd=root)
    assert read_loose(git_dir, commit) is None
    assert read_spec(git_dir, f"{tree}:a/b.md") is None
