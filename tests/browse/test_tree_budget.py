"""The tree page of a store with thousands of folders, or of files in one folder, stays small.

Collapsing folders past a thousand files still drew every folder: on the scale
benchmark's 100,000-file store (4,000 folders) the page came to 1.15 MB. Now the
levels are drawn from the top while they fit in ``ENTRIES_SHOWN`` entries.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from memdir.browse import open_target
from memdir.browse._tree import ENTRIES_SHOWN

from .conftest import Served

TOPS, MIDS, LEAVES = 30, 10, 10  # 3,330 folders, one file in each leaf folder


def _get(site: Served, path: str) -> httpx.Response:
    page = httpx.get(site.url(path), headers={"Authorization": f"Bearer {site.token}"},
                     timeout=60)
    assert page.status_code == 200, page.text[:500]
    return page


def _note(root: Path, relative: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    name = path.stem
    path.write_text(f"---\nname: {name}\ndescription: note {relative}\n---\n# {name}\n",
                    encoding="utf-8")


@pytest.fixture(scope="module")
def deep_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    root = tmp_path_factory.mktemp("deep") / "memories"
    for t in range(TOPS):
        for m in range(MIDS):
            for leaf in range(LEAVES):
                _note(root, f"t{t:02d}/m{m}/l{leaf}/note.md")
    return serve_catalog(open_target(root))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def flat_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    root = tmp_path_factory.mktemp("flat") / "memories"
    for n in range(ENTRIES_SHOWN + 500):
        _note(root, f"n{n:05d}.md")
    return serve_catalog(open_target(root))  # type: ignore[no-any-return]


def _folders_drawn(page: str) -> set[str]:
    return set(re.findall(r'<span class="name">(?:▸ )?([^<]+)/</span>', page))


def test_many_folders_are_drawn_down_to_the_level_that_fits(deep_site: Served) -> None:
    top = _get(deep_site, "/s/store/").text
    drawn = _folders_drawn(top)
    # the top folders and their subfolders (330) fit; the 3,000 leaf folders do not
    assert {f"t{t:02d}" for t in range(TOPS)} <= drawn and "m9" in drawn
    assert not any(name.startswith("l") for name in drawn)
    assert top.count('class="open"') == TOPS * MIDS  # each cut folder opens on its own page
    assert "10 files" in top  # a cut folder still counts what it holds
    assert len(top.encode()) < 200_000


def test_a_cut_folder_opens_whole_on_its_own_page(deep_site: Served) -> None:
    top = _get(deep_site, "/s/store/").text
    link = re.search(r'class="open" href="([^"]*t07%2Fm3[^"]*)"', top)
    assert link is not None, "no open link for /memories/t07/m3"
    opened = httpx.get(f"{deep_site.base}{link.group(1).replace('&amp;', '&')}", timeout=60,
                       headers={"Authorization": f"Bearer {deep_site.token}"}).text
    files = re.findall(r'class="name" href="[^"]*/file/t07/m3/(l\d)/note\.md"', opened)
    assert sorted(files) == [f"l{n}" for n in range(LEAVES)]


def test_a_folder_of_too_many_files_says_how_many_are_left_out(flat_site: Served) -> None:
    top = _get(flat_site, "/s/store/").text
    shown = re.findall(r'class="name" href="[^"]*/file/(n\d{5})\.md"', top)
    assert shown == [f"n{n:05d}" for n in range(ENTRIES_SHOWN)]
    assert "500 more entries of /memories/ not drawn" in top
    assert len(top.encode()) < 1_000_000
    found = _get(flat_site, "/s/store/?q=n02400").text  # the filter reaches one left out
    assert re.findall(r'class="name" href="[^"]*/file/(n\d{5})\.md"', found) == ["n02400"]
