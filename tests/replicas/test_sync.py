"""Replicas synced through real git remotes: a path, and ``git daemon`` on loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store.replica import Replica, SyncError, commits

from .conftest import ALICE, GitDaemon, git, make_replica, store_files


def test_a_clone_gets_the_store_and_changes_travel_both_ways(tmp_path: Path,
                                                             daemon: GitDaemon) -> None:
    laptop = make_replica(tmp_path, "laptop", daemon.url("team.git"))
    laptop.store.create("/memories/people/alice.md", ALICE)
    first = laptop.sync(writers=["alice-agent"])
    assert first.ok and first.sent == 1 and first.snapshot is not None

    server, cloned = Replica.clone(daemon.url("team.git"), tmp_path / "server", name="server")
    assert cloned.received == 1
    assert server.store.read("/memories/people/alice.md") == ALICE

    server.store.create("/memories/projects/atlas.md",
                        "---\nname: atlas\ndescription: Atlas\n---\nstarted\n")
    server.store.delete("/memories/people/alice.md")
    assert server.sync().sent == 1
    back = laptop.sync()
    assert back.received == 1 and not back.merged
    assert store_files(laptop.root) == store_files(server.root)
    assert not laptop.store.exists("/memories/people")  # the emptied folder went too


def test_changes_to_different_files_and_parts_merge_without_a_conflict(
        tmp_path: Path, remote: Path) -> None:
    a = make_replica(tmp_path, "a", str(remote))
    body = "".join(f"line {n}\n" for n in range(20))
    a.store.create("/memories/log.md", "---\nname: log\ndescription: A log\n---\n" + body)
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="b")
    a.store.edit("/memories/log.md", lambda t: t.replace("line 2\n", "line 2 (a)\n"))
    a.store.create("/memories/a-only.md", "---\nname: a-only\ndescription: A\n---\nx\n")
    b.store.edit("/memories/log.md", lambda t: t.replace("line 17\n", "line 17 (b)\n"))
    b.store.create("/memories/b-only.md", "---\nname: b-only\ndescription: B\n---\ny\n")
    b.sync()
    merged = a.sync()
    assert merged.merged and merged.conflicts == []
    b.sync()
    text = a.store.read("/memories/log.md")
    assert "line 2 (a)" in text and "line 17 (b)" in text and "memdir-conflict" not in text
    assert store_files(a.root) == store_files(b.root)
    assert {"a-only.md", "b-only.md"} <= set(store_files(a.root))


def test_an_unreachable_remote_keeps_working_locally_and_catches_up(
        tmp_path: Path, daemon: GitDaemon) -> None:
    a = make_replica(tmp_path, "a", daemon.url("team.git"))
    a.store.create("/memories/one.md", "---\nname: one\ndescription: One\n---\n1\n")
    a.sync()
    daemon.stop()
    a.store.create("/memories/two.md", "---\nname: two\ndescription: Two\n---\n2\n")
    cut = a.sync()
    assert not cut.ok and cut.snapshot is not None
    assert "unreachable" in cut.summary() and "\n" not in cut.summary()
    assert a.store.exists("/memories/two.md")  # nothing lost, the store still works
    a.store.create("/memories/three.md", "---\nname: three\ndescription: 3\n---\n3\n")
    daemon.start()
    back = a.sync()
    assert back.ok and back.sent == 2
    b, _ = Replica.clone(daemon.url("team.git"), tmp_path / "b")
    assert set(b.store.files()) == {"/memories/one.md", "/memories/two.md",
                                    "/memories/three.md"}


def test_the_cli_says_so_in_one_line_and_exits_1_when_offline(tmp_path: Path) -> None:
    store = tmp_path / "m"
    run = [sys.executable, "-m", "memdir"]
    subprocess.run([*run, "init", str(store)], check=True, capture_output=True)
    attached = subprocess.run([*run, "history", str(store), "remote", str(tmp_path / "gone")],
                              capture_output=True, text=True, check=False)
    assert attached.returncode == 0, attached.stderr
    done = subprocess.run([*run, "sync", str(store)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "unreachable" in done.stderr


class _Racing(Replica):
    """A replica that lets another one push between its fetch and its push, once."""

    rival: Replica | None = None

    def _fetch(self) -> None:
        super()._fetch()
        if self.rival is not None:
            rival, self.rival = self.rival, None
            assert rival.sync().sent == 1


def test_a_push_that_loses_the_race_fetches_merges_and_retries(tmp_path: Path,
                                                             remote: Path) -> None:
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/base.md", "---\nname: base\ndescription: Base\n---\n0\n")
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="b")
    racer = _Racing(a.store, name="a")
    racer.rival = b
    a.store.create("/memories/from-a.md", "---\nname: from-a\ndescription: A\n---\na\n")
    b.store.create("/memories/from-b.md", "---\nname: from-b\ndescription: B\n---\nb\n")
    report = racer.sync()
    assert report.ok and report.attempts == 2 and report.merged
    assert git("rev-parse", "main", cwd=remote).strip() == git("rev-parse", "HEAD",
                                                                cwd=a.root).strip()
    assert {"/memories/from-a.md", "/memories/from-b.md"} <= set(a.store.files())


def test_a_lost_race_keeps_its_merge_retries_soon_and_counts_what_came(
        tmp_path: Path, remote: Path) -> None:
    """The retry after a lost push builds on the merge already made, after a short wait."""
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/n.md", "---\nname: n\ndescription: N\n---\none\ntwo\nthree\n")
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="b")
    b.store.edit("/memories/n.md", lambda t: t.replace("one", "one from b"))
    b.sync()
    r1 = git("rev-parse", "main", cwd=remote).strip()
    c, _ = Replica.clone(str(remote), tmp_path / "c", name="c")
    c.store.create("/memories/from-c.md", "---\nname: from-c\ndescription: C\n---\nc\n")
    a.store.edit("/memories/n.md", lambda t: t.replace("three", "three from a"))
    racer = _Racing(a.store, name="a")
    racer.rival = c  # pushes right after a's first fetch: a's first push loses
    report = racer.sync()
    assert report.ok and report.attempts == 2 and report.merged
    assert report.received == 2 and report.sent == 3  # b's and c's; a's, two merges
    assert 0 <= report.waited <= 0.05
    # The first round's merge (of b's change) is the new merge's first parent.
    assert git("rev-parse", "HEAD^1^2", cwd=a.root).strip() == r1
    assert git("rev-parse", "main", cwd=remote).strip() == git("rev-parse", "HEAD",
                                                                cwd=a.root).strip()
    text = a.store.read("/memories/n.md")
    assert "one from b" in text and "three from a" in text and "memdir-conflict" not in text
    assert "/memories/from-c.md" in a.store.files()
    assert not [p for p in a.root.rglob(".tmp-*")]
    # The merges were made by fast-import: no ref of its own is left, nor a pack per merge.
    assert git("for-each-ref", cwd=a.root).count("refs/memdir") == 0
    assert not list((a.root / ".git" / "objects" / "pack").glob("*.pack"))
    assert git("fsck", "--no-dangling", cwd=a.root) == ""


def test_concurrent_replicas_in_separate_processes_all_converge(tmp_path: Path,
                                                                daemon: GitDaemon) -> None:
    script = (
        "import sys\n"
        "from memdir.store import Store\n"
        "from memdir.store.replica import Replica\n"
        "name, url, root = sys.argv[1:]\n"
        "r = Replica(Store(root, create=True), name=name, timeout=30)\n"
        "r.attach(url)\n"
        "for n in range(3):\n"
        "    r.store.create(f'/memories/{name}-{n}.md',\n"
        "                   f'---\\nname: {name}-{n}\\ndescription: x\\n---\\n{n}\\n')\n"
        "    rep = r.sync()\n"
        "    assert rep.ok, rep.summary()\n"
    )
    names = [f"r{n}" for n in range(4)]
    procs = [subprocess.Popen([sys.executable, "-c", script, name, daemon.url("team.git"),
                               str(tmp_path / name)], stderr=subprocess.PIPE)
             for name in names]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err.decode()
    replicas = [Replica(Store(tmp_path / name)) for name in names]
    for replica in replicas:  # a final round: everyone gets everyone's last push
        assert replica.sync().ok
    states = [store_files(r.root) for r in replicas]
    assert all(state == states[0] for state in states)
    assert len(states[0]) == 12


def test_a_file_written_without_the_lock_mid_sync_is_never_overwritten(
        tmp_path: Path, remote: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/n.md", "---\nname: n\ndescription: N\n---\nbase\n")
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="b")
    b.store.edit("/memories/n.md", lambda t: t.replace("base", "from b"))
    b.sync()

    class Planned(Replica):
        """Writes the file (as a tool would, through the lock) between fetch and merge."""

        def _fetch(self) -> None:
            super()._fetch()
            if self.store.read("/memories/n.md").endswith("base\n"):
                self.store.edit("/memories/n.md", lambda t: t.replace("base", "during"))

    assert Planned(a.store, name="a").sync().ok  # recorded, then merged: both kept
    text = a.store.read("/memories/n.md")
    assert "during" in text and "from b" in text

    from memdir.store import _integrate

    real_apply = _integrate.apply_trees
    sneaks = {"left": 1}

    def sneaky_apply(history: object, old: str, new: str) -> object:
        """Writes the file behind the lock's back just before the merge is applied."""
        if sneaks["left"]:
            sneaks["left"] -= 1
            text = (a.root / "n.md").read_text()
            (a.root / "n.md").write_text(text + f"sneaked {sneaks['left']}\n")
        return real_apply(history, old, new)  # type: ignore[arg-type]

    monkeypatch.setattr(_integrate, "apply_trees", sneaky_apply)
    b.store.edit("/memories/n.md", lambda t: t + "more from b\n")
    b.sync()
    once = Replica(a.store, name="a")
    assert once.sync().ok  # the file it was about to replace had changed: recorded, merged
    text = a.store.read("/memories/n.md")
    assert "sneaked 0" in text and "more from b" in text
    b.sync()
    b.store.edit("/memories/n.md", lambda t: t + "again from b\n")
    b.sync()
    always = Replica(a.store, name="a")
    sneaks["left"] = 10
    with pytest.raises(SyncError, match="kept changing"):
        always.sync()
    text = a.store.read("/memories/n.md")
    assert "sneaked 7" in text and "again from b" not in text  # nothing overwritten
    monkeypatch.setattr(_integrate, "apply_trees", real_apply)
    assert a.sync().ok
    text = a.store.read("/memories/n.md")
    assert "sneaked 7" in text and "again from b" in text


def test_commits_name_the_replica_and_the_writer(tmp_path: Path, remote: Path) -> None:
    a = make_replica(tmp_path, "laptop", str(remote))
    a.store.create("/memories/x.md", "---\nname: x\ndescription: X\n---\n1\n")
    a.sync(writers=["agent-7"])
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="server")
    b.store.create("/memories/y.md", "---\nname: y\ndescription: Y\n---\n1\n")
    b.sync(writers=["token ops"])
    a.store.create("/memories/z.md", "---\nname: z\ndescription: Z\n---\n1\n")
    a.sync()
    found = {(c.replica, c.writers) for c in commits(a.history) if c.parents <= 1}
    assert ("laptop", ("agent-7",)) in found and ("server", ("token ops",)) in found
    log = subprocess.run([sys.executable, "-m", "memdir", "history", str(a.root), "log",
                          "--all"], capture_output=True, text=True, check=True).stdout
    assert "(by token ops on server)" in log and "(by agent-7 on laptop)" in log


def test_merging_follows_info_attributes_whatever_the_store_plants(
        tmp_path: Path, remote: Path) -> None:
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/n.md", "---\nname: n\ndescription: N\n---\nbase\n")
    (a.root / ".gitattributes").write_text("* merge=union\n*.md merge=binary\n")
    a.sync()
    lines = (a.root / ".git" / "info" / "attributes").read_text().splitlines()
    assert lines.index("* merge=memdir") > next(i for i, ln in enumerate(lines)
                                                if ln.startswith("* -text"))
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="b")
    a.store.edit("/memories/n.md", lambda t: t.replace("base", "from a"))
    b.store.edit("/memories/n.md", lambda t: t.replace("base", "from b"))
    b.sync()
    a.sync()
    text = a.store.read("/memories/n.md")
    assert "memdir-conflict" in text and "from a" in text and "from b" in text


def test_clone_refuses_a_folder_with_files_and_sync_needs_a_remote(tmp_path: Path,
                                                                   remote: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.md").write_text("mine")
    with pytest.raises(SyncError, match="not empty"):
        Replica.clone(str(remote), busy)
    assert (busy / "keep.md").read_text() == "mine"
    with pytest.raises(SyncError, match="no remote"):
        Replica(Store(tmp_path / "lonely", create=True)).sync()


def test_an_empty_remote_gives_an_empty_replica_that_fills_it(tmp_path: Path,
                                                              remote: Path) -> None:
    first, report = Replica.clone(str(remote), tmp_path / "first", name="first")
    assert report.ok and first.store.files() == []
    first.store.create("/memories/x.md", "---\nname: x\ndescription: X\n---\n1\n")
    assert first.sync().sent == 1
    second, _ = Replica.clone(str(remote), tmp_path / "second")
    assert second.store.files() == ["/memories/x.md"]


def test_a_merging_round_runs_only_the_merge_between_fetch_and_push(
        tmp_path: Path, remote: Path) -> None:
    # Another replica's push between this one's fetch and push makes it lose the race;
    # every git process in that stretch widens it. A round merges without comparing
    # the two sides first (the merge's tree tells whether either was in the other;
    # the counts are made after the push) and reads the merge's objects from their
    # loose files.
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/n.md", "---\nname: n\ndescription: N\n---\none\ntwo\nthree\n")
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="b")
    b.store.edit("/memories/n.md", lambda t: t.replace("one", "one from b"))
    b.sync()
    c, _ = Replica.clone(str(remote), tmp_path / "c", name="c")
    c.store.edit("/memories/n.md", lambda t: t.replace("two", "two from c"))
    a.store.edit("/memories/n.md", lambda t: t.replace("three", "three from a"))
    racer = _Racing(a.store, name="a")
    racer.rival = c
    commands: list[str] = []
    _watch(commands, str(a.root / ".git"))
    try:
        report = racer.sync()
    finally:
        _watching.clear()
    assert report.ok and report.attempts == 2 and report.merged
    assert report.received == 2 and report.sent == 3
    rounds = " ".join(commands).split("fetch")[1:]
    assert len(rounds) == 2
    for stretch in rounds:  # the first round, and the one after the lost race
        assert stretch.split("push")[0].split() == ["merge-tree"], commands
    text = a.store.read("/memories/n.md")
    assert all(f"{w} from {n}" in text for w, n in (("one", "b"), ("two", "c"), ("three", "a")))


_watching: list[tuple[list[str], str]] = []
_hooked: list[bool] = []


def _watch(into: list[str], git_dir: str) -> None:
    """Record the git command (its first word) of each process started on ``git_dir``."""
    if not _hooked:
        sys.addaudithook(_hook)
        _hooked.append(True)
    _watching[:] = [(into, git_dir)]


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event != "subprocess.Popen" or not _watching:
        return
    into, git_dir = _watching[0]
    argv = [str(a) for a in args[1]]  # type: ignore[attr-defined]
    env = args[3] if isinstance(args[3], dict) else {}
    if argv[:1] != ["git"] or env.get("GIT_DIR") != git_dir:
        return
    words = iter(argv[1:])
    for word in words:
        if word == "-c":
            next(words, None)
        else:
            into.append(word)
            break


def test_objects_are_packed_after_the_push_never_before_it(tmp_path: Path,
                                                          remote: Path) -> None:
    # `git commit` starts `git maintenance run --auto` after every commit: for a
    # snapshot that is one more process before the fetch and the push. The sync
    # turns it off and packs when git would (here: more packs than gc.autoPackLimit),
    # after a push that reached the remote.
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/n.md", "---\nname: n\ndescription: N\n---\none\n")
    assert a.sync().ok
    git("config", "gc.autoDetach", "false", cwd=a.root)  # pack now, not in the background
    packs = a.root / ".git" / "objects" / "pack"
    for n in range(55):
        blob = git("hash-object", "-w", "--stdin", cwd=a.root, input=f"filler {n}\n").strip()
        git("pack-objects", "-q", str(packs / "pack"), cwd=a.root, input=f"{blob}\n")
    count = len(list(packs.glob("*.pack")))
    assert count > 50
    a.attach(str(tmp_path / "gone.git"))  # unreachable: nothing may be packed now
    a.store.edit("/memories/n.md", lambda t: t + "two\n")
    assert not a.sync().ok
    assert len(list(packs.glob("*.pack"))) == count
    a.attach(str(remote))
    assert a.sync().ok
    assert len(list(packs.glob("*.pack"))) < 50
    assert "two" in git("show", "main:n.md", cwd=remote)


def test_a_remote_moved_back_into_this_replicas_history_gets_no_merge_commit(
        tmp_path: Path, remote: Path) -> None:
    # The fetch shows the remote moved, and the merge gives exactly this side's files:
    # the remote is in this side's history already (here it was set back by hand), so
    # the sync pushes its own commit as it is.
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/n.md", "---\nname: n\ndescription: N\n---\none\n")
    a.sync()
    first = git("rev-parse", "main", cwd=remote).strip()
    a.store.edit("/memories/n.md", lambda t: t + "two\n")
    a.sync()
    second = git("rev-parse", "main", cwd=remote).strip()
    git("update-ref", "refs/heads/main", first, cwd=remote)
    report = a.sync()
    assert report.ok and not report.merged and report.sent == 1 and report.received == 0
    assert git("rev-parse", "main", cwd=remote).strip() == second


def test_a_fetch_of_hundreds_of_objects_leaves_them_for_the_merge_to_read(
        tmp_path: Path, remote: Path) -> None:
    # git keeps a fetch of 100 objects or more as a pack, which only a git process
    # reads; the sync keeps up to 1,000 loose, so its merge reads them in process
    # (here: 150 files another replica wrote, one of them changed on both sides).
    a = make_replica(tmp_path, "a", str(remote))
    a.store.create("/memories/n.md", "---\nname: n\ndescription: N\n---\none\ntwo\n")
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "b", name="b")
    for n in range(150):
        b.store.create(f"/memories/many/m{n}.md", f"---\nname: m{n}\ndescription: M\n---\n{n}\n")
    b.store.edit("/memories/n.md", lambda t: t.replace("one", "one from b"))
    b.sync()
    a.store.edit("/memories/n.md", lambda t: t.replace("two", "two from a"))
    commands: list[str] = []
    _watch(commands, str(a.root / ".git"))
    try:
        report = a.sync()
    finally:
        _watching.clear()
    assert report.ok and report.merged and report.received == 1
    assert " ".join(commands).split("fetch")[1].split("push")[0].split() == ["merge-tree"]
    assert not list((a.root / ".git" / "objects" / "pack").glob("*.pack"))
    text = a.store.read("/memories/n.md")
    assert "one from b" in text and "two from a" in text
    assert len(a.store.files()) == 151
