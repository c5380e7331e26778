"""No store content makes the browser answer 500: a bad entry shows as a finding instead.

Each case is a store holding one good file and one bad entry, made on disk the way
a shell command or a careless tool would leave it. Every page of the store is then
requested: the tree, the health page, the good file, and the bad entry's own page,
which must name what is wrong with it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from memdir.browse import browse_app, open_target

OK = "---\nname: ok\ndescription: A good file\n---\n# Ok\n\nFine.\n"
Case = Callable[[Path], str]
"""Makes the bad entry under the store root; returns its path below the root, as bytes-safe."""


def _dangling(root: Path) -> str:
    os.symlink("nowhere.md", root / "dangling.md")
    return "dangling.md"


def _looping(root: Path) -> str:
    os.symlink("loop.md", root / "loop.md")
    return "loop.md"


def _non_utf8_name(root: Path) -> str:
    with open(os.fsencode(root) + b"/bad-\xff.md", "wb") as out:
        out.write(b"---\nname: bad\ndescription: d\n---\n")
    return quote(b"bad-\xff.md")


def _non_utf8_text(root: Path) -> str:
    (root / "latin.md").write_bytes(b"---\nname: latin\ndescription: d\n---\ncaf\xe9\n")
    return "latin.md"


def _deep(levels: int) -> Case:
    def make(root: Path) -> str:
        folder = root.joinpath(*["d"] * levels)
        folder.mkdir(parents=True)
        (folder / "leaf.md").write_text("---\nname: leaf\ndescription: deep\n---\n# Leaf\n")
        return "/".join(["d"] * levels) + "/leaf.md"
    return make


CASES: dict[str, tuple[Case, str]] = {
    # case: (how to make it, what its page or the health page must say)
    "dangling-link": (_dangling, "symlink"),
    "looping-link": (_looping, "symlink"),
    "non-utf8-name": (_non_utf8_name, "not-markdown"),
    "non-utf8-text": (_non_utf8_text, "is not valid UTF-8 text"),
    "350-levels": (_deep(350), "deep"),
    "600-levels": (_deep(600), "deep"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_page_of_a_store_with_a_bad_entry_fails(case: str, tmp_path: Path) -> None:
    root = tmp_path / "memories"
    root.mkdir()
    (root / "ok.md").write_text(OK)
    make, said = CASES[case]
    bad = make(root)
    client = TestClient(browse_app(open_target(root), token=None),
                        base_url="http://127.0.0.1", raise_server_exceptions=False)
    pages = {path: client.get(path) for path in (
        "/s/store/", "/s/store/health", "/s/store/file/ok.md", f"/s/store/file/{bad}")}
    assert {p: r.status_code for p, r in pages.items() if r.status_code >= 500} == {}
    assert "ok.md" in pages["/s/store/"].text
    bad_page = pages[f"/s/store/file/{bad}"]
    assert said in bad_page.text, bad_page.text[-600:]
    if bad_page.status_code == 404:  # not a memory file: the health page lists it too
        assert said in pages["/s/store/health"].text


def test_a_name_that_is_not_utf8_is_shown_as_its_bytes(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    root.mkdir()
    _non_utf8_name(root)
    client = TestClient(browse_app(open_target(root), token=None), base_url="http://127.0.0.1")
    health = client.get("/s/store/health").text
    assert "/memories/bad-\\xff.md" in health
    assert 'href="/s/store/file/bad-%FF.md"' in health


def test_a_600_level_tree_is_drawn_to_its_leaf(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    root.mkdir()
    leaf = _deep(600)(root)
    client = TestClient(browse_app(open_target(root), token=None), base_url="http://127.0.0.1")
    tree = client.get("/s/store/").text
    assert tree.count('<li class="dir">') == 600
    assert tree.count("<ul") == tree.count("</ul>")  # every folder's list is closed
    assert f'href="/s/store/file/{leaf}"' in tree


@pytest.mark.slow
def test_a_file_with_85000_headings_fails_no_page(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    root.mkdir()
    (root / "ok.md").write_text(OK)
    (root / "big.md").write_text("---\nname: big\ndescription: d\n---\n"
                                 + "".join(f"# h{i}\n" for i in range(85_000)))
    client = TestClient(browse_app(open_target(root), token=None),
                        base_url="http://127.0.0.1", raise_server_exceptions=False)
    for path in ("/s/store/file/ok.md", "/s/store/", "/s/store/health"):
        assert client.get(path).status_code < 500, path
