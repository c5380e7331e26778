"""memdir's merge of memory files: the driver alone, and inside real git merges of real clones."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store import conflicted_paths, find_blocks, has_conflict, lint_store, parse_file
from memdir.store._merge import Labels, merge_bytes
from memdir.store.replica import Replica

from .conftest import ALICE, git, make_replica

HEADER = "---\nname: alice\ndescription: Alice, a friend\n---\n"
LABELS = Labels("replica laptop", "replica server")


def _merge(base: str, ours: str, theirs: str) -> tuple[str, int, int]:
    merged = merge_bytes(base.encode(), ours.encode(), theirs.encode(), "people/alice.md",
                         LABELS)
    return merged.data.decode(), merged.conflicts, merged.unions


def _pair(tmp_path: Path, remote: Path, text: str = ALICE) -> tuple[Replica, Replica]:
    a = make_replica(tmp_path, "laptop", str(remote))
    a.store.create("/memories/people/alice.md", text)
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "server", name="server")
    return a, b


def _no_git_markers(text: str) -> bool:
    return not any(line.startswith(("<<<<<<<", ">>>>>>>", "=======", "|||||||"))
                   for line in text.splitlines())


def test_header_fields_changed_on_each_side_merge_field_by_field() -> None:
    base = HEADER + "body\n"
    ours = base.replace("Alice, a friend", "Alice, a friend from school")
    theirs = base.replace("---\nbody", "metadata:\n  type: note\n---\nbody")
    text, conflicts, _ = _merge(base, ours, theirs)
    assert conflicts == 0
    parsed = parse_file(text, "alice")
    assert parsed.defects == []
    assert parsed.frontmatter is not None
    assert parsed.frontmatter.description == "Alice, a friend from school"
    assert parsed.frontmatter.metadata == {"type": "note"}


def test_one_field_set_differently_keeps_both_values_and_a_valid_header() -> None:
    base = HEADER + "body\n"
    ours = base.replace("Alice, a friend", "Alice, my sister's friend")
    theirs = base.replace("Alice, a friend", "Alice, a colleague")
    text, conflicts, _ = _merge(base, ours, theirs)
    assert conflicts == 1
    parsed = parse_file(text, "alice")
    assert parsed.defects == [] and parsed.frontmatter is not None
    assert parsed.frontmatter.description == "Alice, my sister's friend"
    (block,) = find_blocks(text)
    assert "description" in block.what
    assert [label for label, _ in block.versions] == ["replica laptop (in the header now)",
                                                      "replica server"]
    assert "Alice, a colleague" in block.versions[1][1]


def test_the_same_lines_changed_on_both_sides_keep_both_versions() -> None:
    text, conflicts, _ = _merge(ALICE, ALICE.replace("phone: 1", "phone: 2"),
                                ALICE.replace("phone: 1", "phone: 3"))
    assert conflicts == 1 and _no_git_markers(text)
    (block,) = find_blocks(text)
    assert block.versions == (("replica laptop", "phone: 2"), ("replica server", "phone: 3"))
    assert parse_file(text, "alice").defects == []
    assert text.startswith(HEADER) and text.endswith("mail: a@x\n")


def test_lines_added_at_the_same_place_are_all_kept_without_a_conflict() -> None:
    text, conflicts, unions = _merge(ALICE, ALICE + "- met in May\n", ALICE + "- likes tea\n")
    assert (conflicts, unions) == (0, 1)
    assert text == ALICE + "- met in May\n- likes tea\n"


def test_lines_one_side_removed_and_the_other_changed_keep_the_change() -> None:
    text, conflicts, _ = _merge(ALICE, ALICE.replace("phone: 1\n", ""),
                                ALICE.replace("phone: 1", "phone: 9"))
    assert conflicts == 0 and text == ALICE.replace("phone: 1", "phone: 9")


def test_a_version_holding_all_of_the_other_wins_and_order_alone_is_no_conflict() -> None:
    grown, conflicts, _ = _merge(ALICE, ALICE.replace("phone: 1", "phone: 2"),
                                 ALICE.replace("phone: 1", "phone: 2\nphone: 3"))
    assert conflicts == 0 and "phone: 2\nphone: 3\nmail" in grown
    one = ALICE.replace("phone: 1\nmail: a@x", "mail: b@x\nphone: 4")
    other = ALICE.replace("phone: 1\nmail: a@x", "phone: 4\nmail: b@x")
    first, c1, _ = _merge(ALICE, one, other)
    second, c2, _ = _merge(ALICE, other, one)
    assert c1 == c2 == 0 and first == second  # the same on either replica


def test_text_that_looks_like_git_markers_merges_as_text() -> None:
    base = HEADER + "<<<<<<< not a marker\n=======\n>>>>>>> theirs\nx\n"
    text, conflicts, _ = _merge(base, base.replace("x\n", "ours\n"),
                                base.replace("x\n", "theirs\n"))
    assert conflicts == 1
    assert text.startswith(base.rsplit("x\n", 1)[0])
    (block,) = find_blocks(text)
    assert [v for _, v in block.versions] == ["ours", "theirs"]


def test_bytes_that_are_not_utf8_keep_both_files_whole() -> None:
    base = HEADER.encode() + b"\xff\xfe old\n"
    merged = merge_bytes(base, base + b"ours \xff\n", base + b"theirs \xfe\n", "x/alice.md",
                         LABELS)
    assert merged.conflicts == 1
    assert b"ours \xff" in merged.data and b"theirs \xfe" in merged.data
    assert merged.data.startswith(HEADER.encode())


lines = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), max_size=12)


@settings(max_examples=60, deadline=None)
@given(base=lines, ours=lines, theirs=lines)
def test_no_line_either_side_wrote_is_lost(base: list[str], ours: list[str],
                                           theirs: list[str]) -> None:
    render = [HEADER + "".join(f"{x}\n" for x in side) for side in (base, ours, theirs)]
    text, conflicts, _ = _merge(*render)
    body = text.split("---\n", 2)[2].splitlines()
    assert _no_git_markers(text)
    assert len(find_blocks(text)) == conflicts
    for side in (ours, theirs):
        for line in set(side) - set(base):
            assert line in body, (line, text)
    assert parse_file(text, "alice").defects == []


def test_the_driver_runs_as_git_calls_it(tmp_path: Path) -> None:
    files = {}
    for name, text in (("O", ALICE), ("A", ALICE.replace("1", "2")), ("B", ALICE + "x\n")):
        files[name] = tmp_path / name
        files[name].write_text(text)
    done = subprocess.run([sys.executable, "-m", "memdir.store._merge", str(files["O"]),
                           str(files["A"]), str(files["B"]), "people/alice.md"],
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert files["A"].read_text() == ALICE.replace("1", "2") + "x\n"
    usage = subprocess.run([sys.executable, "-m", "memdir.store._merge"], capture_output=True,
                           check=False)
    assert usage.returncode == 2


def test_a_plain_git_merge_by_a_person_uses_the_driver(tmp_path: Path, remote: Path) -> None:
    a, b = _pair(tmp_path, remote)
    a.store.edit("/memories/people/alice.md", lambda t: t.replace("phone: 1", "phone: 2"))
    a.sync()
    b.store.edit("/memories/people/alice.md", lambda t: t.replace("phone: 1", "phone: 3"))
    git("add", "-A", cwd=b.root)
    git("commit", "-qm", "by hand", cwd=b.root)
    git("fetch", "-q", "origin", cwd=b.root)
    git("merge", "-q", "--no-edit", "origin/main", cwd=b.root)  # exits 0: no git conflict
    text = b.store.read("/memories/people/alice.md")
    assert _no_git_markers(text) and len(find_blocks(text)) == 1
    assert b.sync().ok  # the next sync lists the file a hand-made merge left conflicted
    assert conflicted_paths(b.root) == {"/memories/people/alice.md"}


def test_an_edit_against_a_delete_keeps_the_edit_either_way(tmp_path: Path,
                                                            remote: Path) -> None:
    a, b = _pair(tmp_path, remote)
    a.store.delete("/memories/people/alice.md")
    a.sync()
    b.store.edit("/memories/people/alice.md", lambda t: t + "- new fact\n")
    report = b.sync()
    assert report.kept == ["/memories/people/alice.md"]
    assert "new fact" in b.store.read("/memories/people/alice.md")
    a.sync()
    assert "new fact" in a.store.read("/memories/people/alice.md")
    # the other way round: the edit is remote, the delete local
    a.store.edit("/memories/people/alice.md", lambda t: t + "- second fact\n")
    a.sync()
    b.store.delete("/memories/people/alice.md")
    b.sync()
    assert "second fact" in b.store.read("/memories/people/alice.md")


def test_a_rename_is_followed_by_the_other_sides_edit(tmp_path: Path, remote: Path) -> None:
    body = "".join(f"fact {n}\n" for n in range(12))
    a, b = _pair(tmp_path, remote, HEADER + body)
    a.store.rename("/memories/people/alice.md", "/memories/friends/alice-smith.md",
                   transform=lambda t: t.replace("name: alice", "name: alice-smith"))
    a.sync()
    b.store.edit("/memories/people/alice.md", lambda t: t.replace("fact 7", "fact 7 (new)"))
    b.store.edit("/memories/people/alice.md",
                 lambda t: t.replace("Alice, a friend", "Alice Smith, a friend"))
    assert b.sync().conflicts == []
    assert not b.store.exists("/memories/people/alice.md")
    text = b.store.read("/memories/friends/alice-smith.md")
    assert "fact 7 (new)" in text and "Alice Smith, a friend" in text
    assert parse_file(text, "alice-smith").defects == []


def test_two_renames_of_one_file_keep_both_names(tmp_path: Path, remote: Path) -> None:
    a, b = _pair(tmp_path, remote)
    a.store.rename("/memories/people/alice.md", "/memories/people/alice-a.md")
    a.sync()
    b.store.rename("/memories/people/alice.md", "/memories/people/alice-b.md")
    report = b.sync()
    assert set(b.store.files()) == {"/memories/people/alice-a.md", "/memories/people/alice-b.md"}
    assert report.kept


def test_the_sync_merges_as_the_driver_git_calls_does(tmp_path: Path, remote: Path) -> None:
    a, b = _pair(tmp_path, remote)
    c, _ = Replica.clone(str(remote), tmp_path / "other", name="other")
    a.store.edit("/memories/people/alice.md", lambda t: t.replace("phone: 1", "phone: 2")
                 .replace("Alice, a friend", "Alice, from school"))
    a.sync()
    for side in (b, c):
        side.store.edit("/memories/people/alice.md", lambda t: t.replace("phone: 1", "phone: 3")
                        .replace("Alice, a friend", "Alice, a colleague") + "- new\n")
    git("add", "-A", cwd=c.root)
    git("commit", "-qm", "by hand", cwd=c.root)
    git("fetch", "-q", "origin", cwd=c.root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t", "MEMDIR_MERGE_OURS": "replica server",
                "MEMDIR_MERGE_THEIRS": "replica laptop"})
    merged = subprocess.run(["git", "merge", "-q", "--no-edit", "origin/main"], cwd=c.root,
                            env=env, capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stderr  # git called the driver: no git conflict
    assert b.sync().conflicts == ["/memories/people/alice.md"]  # merged in memdir's process
    assert (c.root / "people" / "alice.md").read_bytes() == \
        (b.root / "people" / "alice.md").read_bytes()


def test_every_merged_file_stays_lint_clean_and_marker_free(tmp_path: Path,
                                                             remote: Path) -> None:
    a, b = _pair(tmp_path, remote)
    for side, word in ((a, "laptop"), (b, "server")):
        side.store.edit("/memories/people/alice.md",
                        lambda t, w=word: t.replace("Alice, a friend", f"Alice ({w})")
                        .replace("mail: a@x", f"mail: {w}@x"))
        side.store.create(f"/memories/{word}.md", f"---\nname: {word}\ndescription: d\n---\nx\n")
    b.sync()
    a.sync()
    b.sync()
    for side in (a, b):
        assert lint_store(side.store) == []
        for path in side.store.files():
            assert _no_git_markers(side.store.read(path))
    assert has_conflict(a.store.read("/memories/people/alice.md"))
    assert not any(name.startswith(".merge_file") for name in os.listdir(a.root))


def test_additions_both_sides_made_in_part_are_kept_once() -> None:
    text, conflicts, unions = _merge(ALICE, ALICE + "- a\n- b\n- c\n", ALICE + "- b\n- c\n- d\n")
    assert (conflicts, unions) == (0, 1)
    assert text == ALICE + "- a\n- b\n- c\n- d\n"


def test_a_conflict_block_is_never_cut_by_a_later_merge() -> None:
    first, _, _ = _merge(ALICE, ALICE.replace("phone: 1", "phone: 2"),
                         ALICE.replace("phone: 1", "phone: 3"))
    (block,) = find_blocks(first)
    lines = first.split("\n")
    # one replica resolves the block; another edits a line inside it at the same time
    resolved = "\n".join(lines[: block.first - 1] + ["phone: 3"] + lines[block.last :])
    inside = "\n".join(lines[: block.first + 1] + ["phone: 2 (work)"] + lines[block.first + 2 :])
    text, conflicts, _ = _merge(first, resolved, inside)
    assert conflicts == 1 and _no_git_markers(text)
    (outer,) = find_blocks(text)  # one level: the old block's versions join the new one
    assert [v for _, v in outer.versions] == ["phone: 3", "phone: 2 (work)"]
    assert not any(has_conflict(v) for _, v in outer.versions)
    body = text.split("\n")
    replaced = "\n".join(body[: outer.first - 1] + ["phone: 3 (kept)"] + body[outer.last :])
    assert not has_conflict(replaced)  # replacing the outer block leaves no stray marker


def test_conflicts_over_conflicts_grow_by_versions_not_by_copies() -> None:
    text, _, _ = _merge(ALICE, ALICE.replace("phone: 1", "phone: 2"),
                        ALICE.replace("phone: 1", "phone: 3"))
    for round_ in range(12):  # each round: one side resolves, the other edits inside the block
        (block,) = find_blocks(text)
        lines = text.split("\n")
        resolved = "\n".join(lines[: block.first - 1] + [f"phone: r{round_}"]
                             + lines[block.last :])
        inside = "\n".join(lines[: block.first + 1] + [f"phone: e{round_}"]
                           + lines[block.first + 1 :])
        text, conflicts, _ = _merge(text, resolved, inside)
        assert conflicts == 1
    (block,) = find_blocks(text)
    assert not any(has_conflict(v) for _, v in block.versions)
    assert len(text) < 4_000  # linear in the rounds: 12 rounds, a few dozen lines
    for n in range(12):
        assert f"phone: r{n}" in text and f"phone: e{n}" in text


def test_the_same_versions_under_two_replicas_names_merge_alike_on_both() -> None:
    # Found by the simulation: two replicas each merged the same two versions of a
    # block, each naming the text it kept after itself; merging those two results
    # kept this side's name again, so every further merge made a new file and the
    # replicas never settled (1,500 merge commits in a run). The name that sorts
    # first is kept now, whichever side is merging.
    from memdir.store._merge import _fullest

    same, own = "- a\n- b", ("replica r0", "- c")
    one = _fullest([("replica r2", same), ("replica r0", same), own])
    other = _fullest([("replica r0", same), ("replica r2", same), own])
    assert one == other == [("replica r0", "- a\n- b"), ("replica r0", "- c")]


def _distinct_edits(seed: int) -> tuple[list[str], list[str], list[str]]:
    """A base of distinct lines and two sides that replace, add and remove lines in place."""
    rng = random.Random(seed)
    fresh = (f"- line {seed}-{n}" for n in range(10_000))
    base = [next(fresh) for _ in range(rng.randint(0, 15))]

    def edit(lines: list[str]) -> list[str]:
        lines = list(lines)
        for _ in range(rng.randint(0, 5)):
            roll = rng.random()
            if roll < 0.4 and lines:
                lines[rng.randrange(len(lines))] = next(fresh)
            elif roll < 0.7:
                lines.insert(rng.randint(0, len(lines)), next(fresh))
            elif lines:
                lines.pop(rng.randrange(len(lines)))
        return lines

    return base, edit(base), edit(base)


def test_the_line_merge_marks_what_git_merge_file_marks() -> None:
    # The line merge runs in this process; git's own `merge-file --diff3` is the
    # reference. Where every line is distinct the diff has one answer, so both must
    # keep the same lines and mark the same regions (with repeated lines either of
    # two equally short diffs may be taken; the loss test above covers those).
    from memdir.store._merge import _chunks, _git_chunks

    for seed in range(300):
        texts = ["".join(f"{line}\n" for line in side) for side in _distinct_edits(seed)]
        mine = _chunks(*(text.split("\n") for text in texts))
        assert mine is not None
        flat = [x for c in mine for x in (c if isinstance(c, list) else [c])]
        reference = [x for c in _git_chunks(*texts) for x in (c if isinstance(c, list) else [c])]
        assert flat == reference, (seed, texts)


def test_a_merge_starts_no_process() -> None:
    # A sync merges every file both sides changed between its fetch and its push;
    # a `git merge-file` per file was most of what that stretch ran beyond git.
    started: list[str] = []
    _watch(started)
    merged = _merge(ALICE, ALICE.replace("phone: 1", "phone: 2") + "- a\n",
                    ALICE.replace("phone: 1", "phone: 3") + "- b\n")
    _watching.clear()
    assert merged[1:] == (1, 1)
    assert started == []


def test_texts_too_far_apart_to_diff_here_are_merged_by_git() -> None:
    # The diff in this process is bounded; past the bound git's C merges, and still
    # nothing either side wrote is lost.
    base = "".join(f"- old {n}\n" for n in range(1500))
    ours = "".join(f"- ours {n}\n" for n in range(1500))
    theirs = base.replace("- old 7\n", "- theirs 7\n")
    started: list[str] = []
    _watch(started)
    text, conflicts, _ = _merge(HEADER + base, HEADER + ours, HEADER + theirs)
    _watching.clear()
    assert any("merge-file" in args for args in started)
    assert conflicts == 1 and "- theirs 7" in text
    assert all(f"- ours {n}\n" in text for n in range(1500))


_watching: list[list[str]] = []


def _watch(into: list[str]) -> None:
    """Record the command line of every process this one starts, until ``_watching`` clears."""
    if not _hooked:
        sys.addaudithook(_hook)
        _hooked.append(True)
    _watching[:] = [into]


_hooked: list[bool] = []


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event == "subprocess.Popen" and _watching:
        _watching[0].append(" ".join(str(a) for a in args[1] or ()))  # type: ignore[union-attr]
