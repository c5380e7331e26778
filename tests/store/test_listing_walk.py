"""The listing walk (``walk_listing``) against the store's own walk, and the head reader."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store import Store
from memdir.store._frontmatter import description_of, load_header
from memdir.store._paths import open_root
from memdir.store._tree import HEAD_BYTES, MAX_HEADER_BYTES, head_description, walk_listing

DOC = "---\nname: {name}\ndescription: About {name}.\n---\nBody of {name}.\n"


def _odd_store(root: Path) -> Store:
    """A store with every kind of entry a walk meets: the listing must agree on each."""
    store = Store(root, create=True)
    store.write("/memories/people/ann.md", DOC.format(name="ann"))
    store.write("/memories/people/bob.md", DOC.format(name="bob"))
    store.write("/memories/top.md", DOC.format(name="top"))
    (root / "people" / "notes.txt").write_text("not markdown")
    (root / "people" / "no-header.md").write_text("# Just text\n")
    (root / "long.md").write_text("---\nname: long\n" + "x: y\n" * 2000
                                  + "description: past the first read\n---\n")
    (root / "unclosed.md").write_text("---\nname: u\ndescription: never closed\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.md").write_text(DOC.format(name="secret"))
    (root / ".dot.md").write_text(DOC.format(name="dot"))
    (root / "empty").mkdir()
    (root / "link.md").symlink_to(root / "top.md")
    (root / "folder-link").symlink_to(root / "people")
    os.mkfifo(root / "pipe.md")
    (root / "locked.md").write_text(DOC.format(name="locked"))
    (root / "locked.md").chmod(0)
    os.mkdir(os.path.join(os.fsencode(root), b"bad\xff"))
    with open(os.path.join(os.fsencode(root), b"bad\xff", b"in.md"), "w") as handle:
        handle.write(DOC.format(name="in"))
    with open(os.path.join(os.fsencode(root), b"name\xfe.md"), "w") as handle:
        handle.write(DOC.format(name="odd"))
    sock = socket.socket(socket.AF_UNIX)
    if len(os.fsencode(root / "s.md")) < 100:  # the socket path limit
        sock.bind(str(root / "s.md"))
    sock.close()
    return store


def _walked(store: Store, markdown_only: bool) -> list[tuple[object, ...]]:
    return [(e.path, e.is_dir, e.depth, e.size, e.description)
            for e in store.walk(markdown_only=markdown_only)]


@pytest.mark.parametrize("markdown_only", [True, False])
def test_the_listing_walk_lists_what_the_store_walk_lists(
    tmp_path: Path, markdown_only: bool
) -> None:
    store = _odd_store(tmp_path / "s")
    expected = _walked(store, markdown_only)
    assert ("/memories/long.md", False, 1, (tmp_path / "s" / "long.md").stat().st_size,
            "past the first read") in expected
    fd = open_root(store.root)
    try:
        assert walk_listing(fd, markdown_only=markdown_only) == expected
        assert walk_listing(fd, markdown_only=markdown_only, describe=False) == [
            (*e[:4], None) for e in expected]
        assert walk_listing(fd, markdown_only=markdown_only, detail_depth=1) == [
            e if e[2] <= 1 else (*e[:3], 0, None) for e in expected]
        assert walk_listing(fd, ("people",), markdown_only=markdown_only) == [
            (e[0], e[1], e[2] - 1, e[3], e[4]) for e in expected
            if e[0].startswith("/memories/people/")]
    finally:
        os.close(fd)
    assert store.listing(markdown_only=markdown_only) == expected


def test_the_listing_walk_goes_a_thousand_folders_deep(
    store: Store, deep_tree: Callable[..., str]
) -> None:
    path = deep_tree(store.root, 1000, "deep.md", DOC.format(name="deep"))
    try:
        listed = store.listing()
        assert len(listed) == 1001
        assert listed[-1] == (path, False, 1001, len(DOC.format(name="deep")), "About deep.")
        assert listed == _walked(store, True)
    finally:
        store.delete("/memories/d")


def test_the_listing_holds_few_folder_handles_open_on_a_wide_tree(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    for k in range(300):
        (tmp_path / "s" / f"f{k:03}").mkdir()
        (tmp_path / "s" / f"f{k:03}" / "a.md").write_text(DOC.format(name="a"))
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # 32 handles above what the process holds already (a pytest-xdist worker holds
    # more than a lone pytest), far fewer than the tree's 300 folders
    held = max(int(fd) for fd in os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(held + 32, hard), hard))
    try:
        listed = store.listing()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(listed) == 600


def test_the_head_reader_reads_on_to_the_header_end_and_no_further(tmp_path: Path) -> None:
    header = "---\nname: a\n" + "k: v\n" * (HEAD_BYTES // 4) + "description: found\n---\n"
    (tmp_path / "a.md").write_text(header + "body\n" * 50_000)
    (tmp_path / "huge.md").write_text("---\nname: h\n" + "k: v\n" * MAX_HEADER_BYTES
                                      + "description: too far\n---\n")
    (tmp_path / "small.md").write_text(DOC.format(name="s"))
    (tmp_path / "empty.md").write_text("")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert head_description(fd, "a.md") == ((tmp_path / "a.md").stat().st_size, "found")
        assert head_description(fd, "huge.md")[1] is None  # the header is past the limit
        assert head_description(fd, "small.md") == (len(DOC.format(name="s")), "About s.")
        assert head_description(fd, "empty.md") == (0, None)
        os.mkdir(tmp_path / "dir.md")
        with pytest.raises(OSError):
            head_description(fd, "dir.md")
    finally:
        os.close(fd)


_SIMPLE_DESC = re.compile(r"^description:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def _description_by_regex(head: str) -> str | None:
    """``description_of`` as it was written before (by a regex): the same answer is due."""
    head = head.removeprefix("\ufeff")
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    if end < 0:
        return None
    header = head[4:end]
    match = _SIMPLE_DESC.search(header)
    value: str | None = None
    if match is not None:
        simple = match.group(1)
        plain = not simple.startswith(tuple("'\"|>[{&*!%@`#")) and ": " not in simple
        if simple and plain and " #" not in simple:
            value = simple
    if value is None:
        import yaml

        try:
            data = load_header(header)
        except yaml.YAMLError:
            return None
        if not isinstance(data, dict) or data.get("description") is None:
            return None
        value = " ".join(str(data["description"]).split())
    if len(value) > 200:
        value = value[:200] + " [...]"
    return value


_PIECES = st.sampled_from(["description:", "description: ", "description:\t", "\n", "\t",
                           " ", "\r", "x", "name: a", "#", " #", ": ", "'", "-", "---", "\ufeff",
                           "é", "\n---", "adescription: b", "\x85", "\u2028", "[", "y" * 150])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=16), st.booleans())
def test_descriptions_are_read_as_the_regex_read_them(pieces: list[str], bom: bool) -> None:
    head = ("\ufeff" if bom else "") + "---\n" + "".join(pieces) + "\n---\nbody"
    assert description_of(head) == _description_by_regex(head)
