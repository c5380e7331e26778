"""Issue 19, item 8: no spelling of a path reaches another entry than the one it names.

Run against the SDK's reference tool (``BetaLocalFilesystemMemoryTool``) on a
folder of its own. Names that differ by case, Unicode normalization form, a
final dot or an invisible character are distinct entries for both tools; the
spellings both fold (repeated slashes, ``.``, ``..`` that stays inside, a final
slash) reach the same entry for both. Whitespace at either end of a name is the
deliberate difference: the reference keeps ``dir `` as a name of its own, memdir
used to trim it to ``dir`` (so ``delete /memories/dir /`` removed the other
folder) and now refuses it, touching nothing.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest
from anthropic_pair import Pair, tree

DISTINCT = [
    ("case", "Notes", "notes"),
    ("NFC and NFD", unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")),
    ("final dot", "dir.", "dir"),
    ("two final dots", "dir..", "dir."),
    ("zero-width space", "dir\u200b", "dir"),
    ("inner space", "a b", "a  b"),
    ("fullwidth letters", "ｄｉｒ", "dir"),
]


def _c(command: str, **fields: Any) -> dict[str, Any]:
    return {"command": command, **fields}


def _agree(pair: Pair, command: dict[str, Any]) -> None:
    theirs, ours = pair.run(command)
    assert (ours.is_error, ours.text) == (theirs.is_error, theirs.text), command
    assert tree(pair.reference_root) == tree(pair.store.root), command


@pytest.mark.parametrize(("case", "one", "other"), DISTINCT, ids=[d[0] for d in DISTINCT])
def test_distinct_names_stay_distinct_in_both(tmp_path: Path, case: str, one: str,
                                              other: str) -> None:
    pair = Pair(tmp_path)
    for name, text in ((one, "first\n"), (other, "second\n")):
        _agree(pair, _c("create", path=f"/memories/{name}/f.txt", file_text=text))
        _agree(pair, _c("create", path=f"/memories/{name}.txt", file_text=text))
    assert len(tree(pair.store.root)) == 6, tree(pair.store.root)
    for name in (one, other):
        _agree(pair, _c("view", path=f"/memories/{name}/f.txt"))
        _agree(pair, _c("view", path=f"/memories/{name}.txt"))
        _agree(pair, _c("str_replace", path=f"/memories/{name}.txt", old_str="\n",
                        new_str=f" {name}\n"))
    _agree(pair, _c("view", path="/memories"))
    _agree(pair, _c("rename", old_path=f"/memories/{one}", new_path="/memories/moved"))
    _agree(pair, _c("delete", path=f"/memories/{other}"))
    _agree(pair, _c("view", path="/memories"))
    assert tree(pair.store.root)["moved/f.txt"] == b"first\n"


FOLDED = ["/memories//a.txt", "/memories/./a.txt", "/memories/a.txt/", "/memories/x/../a.txt",
          "/memories///x/./../a.txt"]


@pytest.mark.parametrize("spelling", FOLDED)
def test_folded_spellings_reach_the_same_entry_in_both(tmp_path: Path, spelling: str) -> None:
    pair = Pair(tmp_path)
    _agree(pair, _c("create", path="/memories/a.txt", file_text="one\n"))
    _agree(pair, _c("create", path="/memories/x/b.txt", file_text="two\n"))
    _agree(pair, _c("view", path=spelling))
    _agree(pair, _c("str_replace", path=spelling, old_str="one", new_str="uno"))
    _agree(pair, _c("insert", path=spelling, insert_line=1, insert_text="dos"))
    _agree(pair, _c("create", path=spelling, file_text="again"))
    _agree(pair, _c("delete", path=spelling))
    assert "a.txt" not in tree(pair.store.root)


EDGED = ["dir ", " dir", "dir\u00a0", "dir\u3000", "dir\u2003", " dir "]


@pytest.mark.parametrize("edged", EDGED, ids=[repr(e) for e in EDGED])
def test_a_name_edged_with_space_is_refused_and_never_reaches_the_plain_one(
    tmp_path: Path, edged: str
) -> None:
    pair = Pair(tmp_path)
    _agree(pair, _c("create", path="/memories/dir/y.txt", file_text="plain\n"))
    commands = [
        _c("create", path=f"/memories/{edged}/x.txt", file_text="spacey\n"),
        _c("view", path=f"/memories/{edged}/"),
        _c("view", path=f"/memories/{edged}/y.txt"),
        _c("str_replace", path=f"/memories/{edged}/y.txt", old_str="plain", new_str="gone"),
        _c("insert", path=f"/memories/{edged}/y.txt", insert_line=0, insert_text="gone"),
        _c("rename", old_path=f"/memories/{edged}/", new_path="/memories/elsewhere"),
        _c("rename", old_path="/memories/dir/y.txt", new_path=f"/memories/{edged}/y.txt"),
        _c("delete", path=f"/memories/{edged}/"),
        _c("delete", path=f"/memories/{edged}"),
    ]
    for command in commands:
        _, ours = pair.run(command)
        assert ours.is_error, (command, ours)
        assert "begins or ends with" in ours.text, ours.text
        assert len(ours.text.splitlines()) == 1
    assert tree(pair.store.root) == {"dir/": None, "dir/y.txt": b"plain\n"}


def test_the_issue_sequence_loses_nothing(tmp_path: Path) -> None:
    # Issue 19's report: 'dir ' made as a middle component, then the folder 'dir'
    # deleted through '/memories/dir /'.
    pair = Pair(tmp_path)
    theirs, ours = pair.run(_c("create", path="/memories/dir /x.txt", file_text="spacey\n"))
    assert not theirs.is_error and ours.is_error
    theirs, ours = pair.run(_c("create", path="/memories/dir/y.txt", file_text="plain\n"))
    assert (theirs, ours) == (ours, theirs) and not ours.is_error
    theirs, ours = pair.run(_c("delete", path="/memories/dir /"))
    assert not theirs.is_error and ours.is_error
    assert tree(pair.reference_root) == {"dir/": None, "dir/y.txt": b"plain\n"}
    assert tree(pair.store.root) == {"dir/": None, "dir/y.txt": b"plain\n"}


def test_an_entry_edged_with_space_made_by_hand_is_listed_and_left_alone(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    for root in (pair.reference_root, pair.store.root):
        (root / "dir ").mkdir()
        (root / "dir " / "x.txt").write_text("spacey\n")
        (root / "dir").mkdir()
        (root / "dir" / "y.txt").write_text("plain\n")
    _agree(pair, _c("view", path="/memories"))  # both list the two folders
    _agree(pair, _c("view", path="/memories/dir/y.txt"))
    _, ours = pair.run(_c("delete", path="/memories/dir /"))
    assert ours.is_error and "begins or ends with a space" in ours.text
    assert tree(pair.store.root)["dir/y.txt"] == b"plain\n"
    assert tree(pair.store.root)["dir /x.txt"] == b"spacey\n"
