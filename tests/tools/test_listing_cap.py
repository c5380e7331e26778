"""A folder listing of 20,000 entries stays under the output cap and says how to see the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.tools import ToolSet
from memdir.tools._memory import write_set
from memdir.tools._view import MAX_LISTING_CHARS, MAX_LISTING_ENTRIES

FLAT = 10_000
DEEP_FOLDERS, DEEP_FILES = 50, 199
"""10,000 files in one folder, and 50 folders of 199 files: 20,002 entries in all."""
CUT = re.compile(r"\[Listing cut: entries 1-(?P<last>[\d,]+) of (?P<count>[\d,]+) shown\.")


def _write(folder: Path, name: str) -> None:
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: Note {name}, about {'things ' * 20}\n---\nText.\n",
        encoding="utf-8")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("big")
    flat = root / "flat"
    flat.mkdir()
    for k in range(FLAT):
        _write(flat, f"n{k:05d}")
    for f in range(DEEP_FOLDERS):
        folder = root / "deep" / f"d{f:03d}"
        folder.mkdir(parents=True)
        for k in range(DEEP_FILES):
            _write(folder, f"m{k:03d}")
    store = Store(root)
    assert len(store.walk(describe=False)) == 2 + FLAT + DEEP_FOLDERS * (DEEP_FILES + 1)
    return store


async def _view(tools: ToolSet, **args: object) -> str:
    result = await tools.call("view", args)
    assert not result.is_error, result.content
    assert "[cut:" not in result.content  # never the output cap's own cut: the listing's
    return result.content


async def test_the_root_listing_counts_its_entries_and_names_three_ways_on(big: Store) -> None:
    text = await _view(write_set(big), path="/memories")
    assert len(text) <= MAX_LISTING_CHARS + 1000
    cut = CUT.search(text)
    assert cut is not None, text[-500:]
    count = 2 + FLAT + DEEP_FOLDERS  # two levels: the folders, the flat files, deep's folders
    assert int(cut["count"].replace(",", "")) == count
    last = int(cut["last"].replace(",", ""))
    assert last == len(text.splitlines()) - 2 <= 2 * MAX_LISTING_ENTRIES
    assert f"view_range=[{last + 1}, {last + 2 * MAX_LISTING_ENTRIES}]" in text
    assert "/memories/flat (10,000 files), /memories/deep (9,950 files)" in text
    assert "grep" in text.splitlines()[-1]


async def test_view_range_pages_through_a_folder_of_10000_files(big: Store) -> None:
    tools = write_set(big)
    first = await _view(tools, path="/memories/flat")
    assert "n00000.md" in first and CUT.search(first) is not None
    last_page = await _view(tools, path="/memories/flat", view_range=[FLAT - 2, -1])
    names = re.findall(r"n\d{5}\.md", last_page)
    assert names == [f"n{k:05d}.md" for k in range(FLAT - 3, FLAT)]
    assert "entries 9,998-10,000:" in last_page.splitlines()[0]
    assert "Listing cut" not in last_page  # the last entries fit: nothing more to say
    middle = await _view(tools, path="/memories/flat", view_range=[5_001, 5_010])
    assert re.findall(r"n\d{5}\.md", middle) == [f"n{k:05d}.md" for k in range(5_000, 5_010)]
    assert "entries 5,001-5,010 of 10,000 shown" in middle
    assert "view_range=[5011, 5610]" in middle


async def test_a_view_range_outside_the_listing_says_how_many_entries_there_are(
        big: Store) -> None:
    result = await write_set(big).call("view", {"path": "/memories/flat",
                                                "view_range": [10_001, 10_002]})
    assert result.is_error
    assert "10,000 entries" in result.content and "view_range=[first, last]" in result.content
