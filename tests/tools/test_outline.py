"""toc and section_read on files with very many headings: linear work, bounded answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.store import Store
from memdir.tools import read_set
from memdir.tools._outline import MAX_TOC_HEADINGS

HEADINGS = 70_000
FRONT = "---\nname: heads\ndescription: many headings\n---\n"


@pytest.fixture
def heads(tmp_path: Path) -> Store:
    """A store whose one file has 70,000 headings, every sixth a level-1 heading."""
    store = Store(tmp_path / "s", create=True)
    body = "".join(f"{'#' * (1 + n % 6)} Heading {n}\ntext {n}\n" for n in range(HEADINGS))
    # Planted on disk: the file is over the store's write cap, as an imported file may be.
    (store.root / "heads.md").write_text(FRONT + body)
    return store


@pytest.mark.slow
async def test_toc_of_70000_headings_is_answered_within_the_limit_and_cut(heads: Store) -> None:
    result = await read_set(heads).call("toc", {"path": "/memories/heads.md"})
    assert not result.is_error, result.content[:300]
    lines = result.content.splitlines()
    assert len(lines) == 1 + MAX_TOC_HEADINGS + 1
    assert lines[1] == "# Heading 0 (lines 5-16)"
    assert lines[-1].startswith(f"[... {HEADINGS - MAX_TOC_HEADINGS:,} more headings from line "
                                f"{5 + 2 * MAX_TOC_HEADINGS} on")
    assert "view_range=[4005, 4204]" in lines[-1]


@pytest.mark.slow
async def test_section_read_in_70000_headings_finds_the_last_and_bounds_a_miss(
        heads: Store) -> None:
    tools = read_set(heads)
    last = HEADINGS - 1
    hit = await tools.call("section_read", {"path": "/memories/heads.md",
                                            "heading_path": [f"Heading {last}"]})
    assert not hit.is_error, hit.content[:300]
    start = 5 + 2 * last
    assert hit.content.splitlines() == [
        f"/memories/heads.md > Heading {last - 3} > Heading {last - 2} > Heading {last - 1} > "
        f"Heading {last} (lines {start}-{start + 1}):",
        f"{start:>6}\t{'#' * (1 + last % 6)} Heading {last}",
        f"{start + 1:>6}\ttext {last}",
    ]
    miss = await tools.call("section_read", {"path": "/memories/heads.md",
                                             "heading_path": ["Nowhere"]})
    assert miss.is_error and "No section matches Nowhere" in miss.content
    assert len(miss.content) < 4_000
    assert f"[... {HEADINGS - 50:,} more headings; toc lists the file's outline]" in miss.content


async def test_an_ambiguous_heading_lists_the_first_fifty_matches(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    store.write("/memories/n.md", FRONT + "".join(f"# Part {n}\n## Notes\n" for n in range(60)))
    result = await read_set(store).call("section_read", {"path": "/memories/n.md",
                                                         "heading_path": ["Notes"]})
    assert result.is_error
    lines = result.content.splitlines()
    assert "matches 60 sections" in lines[0]
    assert lines[1:3] == ["  Part 0 > Notes (line 6)", "  Part 1 > Notes (line 8)"]
    assert lines[-1] == "  [... 10 more matches; toc lists the file's outline]"
    assert len(lines) == 1 + 50 + 1
