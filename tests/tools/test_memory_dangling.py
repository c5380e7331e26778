"""A delete, rename or edit that leaves references pointing at nothing says so in its result."""

from __future__ import annotations

import pytest

from memdir.store import Store, lint_store
from memdir.tools import ToolSet
from memdir.tools._memory import write_set

BOB = "---\nname: bob\ndescription: Bob\n---\n# Bob\n\n## Work history\n\nBaker.\n"


@pytest.fixture
def tools(store: Store) -> ToolSet:
    store.write("/memories/people/bob.md", BOB)
    store.write("/memories/a.md", "---\nname: a\ndescription: A\n---\n"
                "See /memories/people/bob.md > ## Work history.\n")
    store.write("/memories/b.md", "---\nname: b\ndescription: B\n---\nAlso "
                "/memories/people/bob.md.\n")
    store.write("/memories/c.md", "---\nname: c\ndescription: C\n---\nNothing to see.\n")
    return write_set(store)


def _dangling(store: Store) -> list[tuple[str, int | None]]:
    return [(f.path, f.line) for f in lint_store(store) if f.code == "dangling-reference"]


async def test_a_rename_names_every_file_still_pointing_at_the_old_path(
        tools: ToolSet, store: Store) -> None:
    result = await tools.call("rename", {"old_path": "/memories/people/bob.md",
                                         "new_path": "/memories/friends/bob.md"})
    assert not result.is_error
    first, note = result.content.split("\n")
    assert first == "Moved /memories/people/bob.md to /memories/friends/bob.md."
    assert "2 reference(s) in 2 file(s) still point at /memories/people/bob.md" in note
    assert "/memories/a.md:5, /memories/b.md:5" in note
    assert "replace /memories/people/bob.md with /memories/friends/bob.md" in note
    assert _dangling(store) == [("/memories/a.md", 5), ("/memories/b.md", 5)]  # lint agrees


async def test_deleting_a_folder_counts_references_into_it(tools: ToolSet,
                                                           store: Store) -> None:
    result = await tools.call("delete", {"path": "/memories/people"})
    assert "still point at /memories/people, which no longer exists" in result.content
    assert "point them at another file or remove them" in result.content
    assert len(_dangling(store)) == 2


async def test_a_change_nothing_points_at_adds_no_note(tools: ToolSet) -> None:
    result = await tools.call("delete", {"path": "/memories/c.md"})
    assert result.content == "Deleted /memories/c.md."
    moved = await tools.call("rename", {"old_path": "/memories/a.md",
                                        "new_path": "/memories/notes/a.md"})
    assert moved.content == "Moved /memories/a.md to /memories/notes/a.md."


async def test_an_edit_that_drops_a_referenced_heading_names_the_referrer(
        tools: ToolSet, store: Store) -> None:
    result = await tools.call("str_replace", {"path": "/memories/people/bob.md",
                                              "old_str": "## Work history",
                                              "new_str": "## Jobs"})
    assert "removed a heading that 1 reference(s) point at: /memories/a.md:5" in result.content
    assert _dangling(store) == [("/memories/a.md", 5)]


async def test_an_edit_or_insert_that_writes_a_bad_reference_says_so(tools: ToolSet) -> None:
    result = await tools.call("insert", {"path": "/memories/c.md", "insert_line": 5,
                                         "insert_text": "See /memories/nobody.md."})
    assert "points at nothing (line 6: /memories/nobody.md does not exist)" in result.content
    fine = await tools.call("str_replace", {"path": "/memories/c.md",
                                            "old_str": "Nothing to see.",
                                            "new_str": "See /memories/b.md."})
    # A good new reference, and the bad one left from before, add no note.
    assert fine.content.startswith("Edited /memories/c.md.") and "Note:" not in fine.content
