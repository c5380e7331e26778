"""The fast walks' shared listing: hidden names skipped, folders told without following links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir.store._tree import visible_entries


def _listed(folder: Path) -> dict[str, bool]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return {entry.name: is_dir for entry, is_dir in visible_entries(fd)}
    finally:
        os.close(fd)


def test_hidden_names_go_and_links_are_no_folders(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".state.md").write_text("x")
    (tmp_path / "a.md").write_text("x")
    (tmp_path / "to-sub").symlink_to(tmp_path / "sub")
    (tmp_path / "to-a.md").symlink_to(tmp_path / "a.md")
    os.mkfifo(tmp_path / "pipe")
    assert _listed(tmp_path) == {"sub": True, "a.md": False, "to-sub": False,
                                 "to-a.md": False, "pipe": False}


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to count handles")
def test_the_listing_is_closed_when_the_loop_ends_early(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"n{i}.md").write_text("x")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        before = len(os.listdir("/proc/self/fd"))
        for _ in visible_entries(fd):
            break  # the generator goes with the loop, and its listing with it
        assert len(os.listdir("/proc/self/fd")) == before
        assert len(list(visible_entries(fd))) == 5
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        os.close(fd)


def test_a_folder_that_cannot_be_listed_raises(tmp_path: Path) -> None:
    (tmp_path / "file.md").write_text("x")
    fd = os.open(tmp_path / "file.md", os.O_RDONLY)  # a file, not a folder
    try:
        with pytest.raises(NotADirectoryError):
            next(visible_entries(fd))
    finally:
        os.close(fd)
