"""History over file names a shell command can make: every byte but '/' and NUL.

The shell tool (``touch $'/memories/bad-\\xff.md'``) and any outside program can leave
a file whose name is not UTF-8. A snapshot records it, and every later read of that
step must still work: the state, a replay check, a restore.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store.history import History

NOTE = "---\nname: a\ndescription: A note\n---\nA.\n"


@pytest.mark.parametrize("name", ["new\nline.md", "tab\there.md", '"quoted".md', "-dash.md",
                                  ":(top)magic.md", "back\\slash.md"])
def test_odd_but_utf8_names_are_recorded_and_restored(store: Store, name: str) -> None:
    store.write("/memories/a.md", NOTE)
    history = History(store)
    history.snapshot("one")
    (store.root / name).write_text("odd\n")
    history.snapshot("two")
    assert history.read_state(-1)[f"/memories/{name}"] == "odd\n"
    assert history.verify().ok
    history.restore(0)
    assert not (store.root / name).exists()
    history.restore(1)
    assert (store.root / name).read_text() == "odd\n"


def test_a_non_utf8_name_leaves_the_history_readable(store: Store, tmp_path: Path) -> None:
    # History.blobs decoded each tree path as UTF-8, so this one file made read_state,
    # verify and restore of every later step raise UnicodeDecodeError (issue 19).
    store.write("/memories/a.md", NOTE)
    history = History(store)
    history.snapshot("one")
    bad = os.fsencode(store.root) + b"/bad-\xff.md"
    with open(bad, "wb") as out:
        out.write(b"latin\n")
    history.snapshot("two")
    name = "/memories/" + os.fsdecode(b"bad-\xff.md")
    assert history.read_state(-1)[name] == "latin\n"
    assert history.blobs(-1).keys() == {"/memories/a.md", name}
    assert [changed for _, changed in history.step_changes()][1].keys() == {name}
    assert history.diff(0, 1).added == [name]
    report = history.verify()
    assert report.checked == 2 and report.ok, report.mismatches
    history.restore(0)
    assert not os.path.lexists(bad)
    history.restore(1)
    assert (store.root / "a.md").read_text() == NOTE
    with open(bad, "rb") as back:
        assert back.read() == b"latin\n"
    rebuilt = history.checkout_to(1, tmp_path / "rebuilt")
    with open(os.fsencode(rebuilt.root) + b"/bad-\xff.md", "rb") as copy:
        assert copy.read() == b"latin\n"
    # The git tree holds the name's own bytes, so plain git shows the same file.
    listed = subprocess.run(["git", "-C", str(store.root), "ls-tree", "-z", "--name-only",
                             "HEAD"], capture_output=True, check=True).stdout
    assert listed.split(b"\0")[:2] == [b"a.md", b"bad-\xff.md"]


def test_a_non_utf8_name_made_between_snapshots_of_one_history_is_staged(
    store: Store,
) -> None:
    # A History that lives across snapshots stages only what its change feed names.
    store.write("/memories/a.md", NOTE)
    history = History(store)
    history.snapshot("one")
    with open(os.fsencode(store.root) + b"/bad-\xfe.md", "wb") as out:
        out.write(b"x\n")
    history.snapshot("two")
    os.unlink(os.fsencode(store.root) + b"/bad-\xfe.md")
    history.snapshot("three")
    names = [sorted(history.blobs(i)) for i in range(3)]
    bad = "/memories/" + os.fsdecode(b"bad-\xfe.md")
    assert names == [["/memories/a.md"], ["/memories/a.md", bad], ["/memories/a.md"]]
    assert history.verify().ok


def test_a_file_whose_bytes_are_not_utf8_leaves_the_history_readable(store: Store) -> None:
    # read_state decoded each file strictly, so `memdir history show` of any later step
    # raised UnicodeDecodeError once bash had left one such file.
    store.write("/memories/a.md", NOTE)
    (store.root / "bin.md").write_bytes(b"\xff\xfe\x00 tail\n")
    history = History(store)
    history.snapshot("one")
    assert history.read_state(-1) == {"/memories/a.md": NOTE,
                                      "/memories/bin.md": "\ufffd\ufffd\x00 tail\n"}
    blob = history.blobs(-1)["/memories/bin.md"]
    assert history.read_blobs([blob])[blob] == b"\xff\xfe\x00 tail\n"
    assert history.verify().ok
