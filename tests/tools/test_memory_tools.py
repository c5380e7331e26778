"""The write, read and folder tool sets, called exactly as a model calls them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.tools import ToolSet, make_toolset
from memdir.tools._memory import folder_set, read_set, write_set
from memdir.tools._view import MAX_LINE_VIEW_CHARS, MAX_VIEW_LINES

ALICE = (
    "---\nname: alice\ndescription: Alice, a colleague\n---\n"
    "# Alice\n\n## Work\nJoined Acme in 2021.\nLikes tea.\n## Home\nLives in Oslo.\nLikes tea.\n"
)


@pytest.fixture
def tools(store: Store) -> ToolSet:
    return write_set(store)


@pytest.fixture
def filled(store: Store) -> Store:
    store.write("/memories/people/alice.md", ALICE)
    store.write(
        "/memories/people/bob.md", "---\nname: bob\ndescription: Bob, a neighbour\n---\nHi\n"
    )
    store.write("/memories/trips/2023/paris.md", "---\nname: paris\ndescription: Paris trip\n---\n")
    return store


async def ok(tools: ToolSet, name: str, **args: object) -> str:
    result = await tools.call(name, args)
    assert not result.is_error, result.content
    return result.content


async def err(tools: ToolSet, name: str, **args: object) -> str:
    result = await tools.call(name, args)
    assert result.is_error, result.content
    assert result.content.startswith("Error: ")
    return result.content


def test_sets_have_the_documented_tools(store: Store) -> None:
    assert list(write_set(store).tools) == [
        "view", "create", "str_replace", "insert", "delete", "rename", "grep"
    ]
    assert list(read_set(store).tools) == ["view", "grep", "toc", "section_read"]
    assert list(folder_set(store).tools) == ["view", "grep", "rename"]
    for name in ("write", "read", "folder"):
        assert make_toolset(name, store).name == name
    assert write_set(store).tools["delete"].destructive
    assert read_set(store).tools["view"].read_only
    assert not folder_set(store).tools["rename"].read_only


# -- view ---------------------------------------------------------------------


async def test_view_empty_store_suggests_create(tools: ToolSet) -> None:
    text = await ok(tools, "view", path="/memories")
    assert "empty" in text and "create" in text


async def test_view_folder_lists_sizes_and_descriptions(filled: Store, tools: ToolSet) -> None:
    text = await ok(tools, "view", path="/memories")
    lines = text.splitlines()
    assert lines[0].startswith("/memories: 3 file(s)")
    assert "people/" in lines
    assert any(ln.startswith("  alice.md (") and ln.endswith("Alice, a colleague") for ln in lines)
    assert "\n    paris.md (44 B) - Paris trip" in text  # third level, indented twice
    sub = await ok(tools, "view", path="/memories/people")
    assert "bob.md" in sub and "paris" not in sub


async def test_view_large_tree_shows_two_levels(store: Store, tools: ToolSet) -> None:
    folder = store.root / "a" / "b" / "c"
    folder.mkdir(parents=True)
    for index in range(400):
        (folder / f"f{index}.md").write_text(f"---\nname: f{index}\ndescription: d\n---\n")
    text = await ok(tools, "view", path="/memories")
    assert "Showing two levels" in text
    assert "b/ (400 files inside, not shown)" in text
    assert "f1.md" not in text


async def test_view_file_numbers_every_line(filled: Store, tools: ToolSet) -> None:
    text = await ok(tools, "view", path="/memories/people/alice.md")
    lines = text.splitlines()
    assert lines[0] == "     1\t---"
    assert lines[4] == "     5\t# Alice"
    assert lines[-1] == "    12\tLikes tea."
    assert len(lines) == 12


async def test_view_range(filled: Store, tools: ToolSet) -> None:
    text = await ok(tools, "view", path="/memories/people/alice.md", view_range=[7, 8])
    assert text == "     7\t## Work\n     8\tJoined Acme in 2021."
    tail = await ok(tools, "view", path="/memories/people/alice.md", view_range=[11, -1])
    assert tail.splitlines()[0].startswith("    11\t")
    assert len(tail.splitlines()) == 2


@pytest.mark.parametrize("bad", [[0, 3], [5, 2], [3, 13], [13, -1], [1], [1, 2, 3]])
async def test_view_bad_ranges_explain_the_valid_one(
    filled: Store, tools: ToolSet, bad: list[int]
) -> None:
    text = await err(tools, "view", path="/memories/people/alice.md", view_range=bad)
    assert "has 12 lines" in text


async def test_view_long_file_is_cut_with_a_note(store: Store, tools: ToolSet) -> None:
    body = "".join(f"line {i}\n" for i in range(MAX_VIEW_LINES + 50))
    store.write("/memories/long.md", "---\nname: long\ndescription: d\n---\n" + body)
    text = await ok(tools, "view", path="/memories/long.md")
    assert f"Output cut after line {MAX_VIEW_LINES}" in text
    assert "view_range" in text
    assert len(text.splitlines()) == MAX_VIEW_LINES + 1


async def test_view_huge_single_line_is_summarised(store: Store, tools: ToolSet) -> None:
    huge = "z" * (MAX_LINE_VIEW_CHARS * 4)
    store.write("/memories/wide.md", f"---\nname: wide\ndescription: d\n---\n{huge}\nlast\n")
    text = await ok(tools, "view", path="/memories/wide.md")
    assert f"{MAX_LINE_VIEW_CHARS * 3:,} more characters on this line" in text
    assert text.endswith("     6\tlast")


async def test_view_errors(filled: Store, tools: ToolSet) -> None:
    assert "does not exist" in await err(tools, "view", path="/memories/nobody.md")
    assert "does not exist" in await err(tools, "view", path="/memories/nowhere")
    assert "'..'" in await err(tools, "view", path="/memories/../etc")
    assert "outside the memory store" in await err(tools, "view", path="/etc/passwd")


# -- create -------------------------------------------------------------------


async def test_create_makes_folders_and_file(store: Store, tools: ToolSet) -> None:
    text = await ok(tools, "create", path="/memories/a/b/note.md",
                    file_text="---\nname: note\ndescription: A note\n---\nhello\n")
    assert "Created /memories/a/b/note.md" in text
    assert store.read("/memories/a/b/note.md").endswith("hello\n")


async def test_create_refuses_to_overwrite(filled: Store, tools: ToolSet) -> None:
    text = await err(tools, "create", path="/memories/people/alice.md",
                     file_text="---\nname: alice\ndescription: new\n---\n")
    assert "already exists" in text and "str_replace" in text
    assert filled.read("/memories/people/alice.md") == ALICE


@pytest.mark.parametrize(
    "file_text",
    ["just text", "---\nname: other\ndescription: x\n---\n", "---\nname: note\n---\n",
     "---\nname: note\ndescription: [x\n---\n"],
)
async def test_create_requires_a_valid_header(store: Store, tools: ToolSet, file_text: str) -> None:
    text = await err(tools, "create", path="/memories/note.md", file_text=file_text)
    assert "---\nname: note\ndescription:" in text
    assert not store.exists("/memories/note.md")


async def test_create_size_cap_and_bad_paths(tmp_path: Path) -> None:
    tools = write_set(Store(tmp_path / "s", create=True, max_file_bytes=200))
    big = "---\nname: big\ndescription: d\n---\n" + "x" * 300
    assert "cap" in await err(tools, "create", path="/memories/big.md", file_text=big)
    assert "markdown" in await err(tools, "create", path="/memories/a.txt", file_text="x")
    assert "hidden" in await err(tools, "create", path="/memories/.a.md", file_text="x")


# -- str_replace --------------------------------------------------------------


async def test_str_replace_edits_once_and_shows_the_lines(filled: Store, tools: ToolSet) -> None:
    text = await ok(tools, "str_replace", path="/memories/people/alice.md",
                    old_str="Joined Acme in 2021.", new_str="Joined Acme in 2021.\nLeft in 2024.")
    assert "     9\tLeft in 2024." in text
    assert "Left in 2024.\nLikes tea.\n## Home" in filled.read("/memories/people/alice.md")


async def test_str_replace_several_matches_lists_lines(filled: Store, tools: ToolSet) -> None:
    text = await err(tools, "str_replace", path="/memories/people/alice.md",
                     old_str="Likes tea.", new_str="x")
    assert "occurs 2 times" in text and "lines 9, 12" in text
    assert filled.read("/memories/people/alice.md") == ALICE


async def test_str_replace_no_match(filled: Store, tools: ToolSet) -> None:
    text = await err(tools, "str_replace", path="/memories/people/alice.md",
                     old_str="Likes coffee.", new_str="x")
    assert "not found" in text and "view" in text
    numbered = await err(tools, "str_replace", path="/memories/people/alice.md",
                         old_str="     9\tLikes tea.", new_str="x")
    assert "line numbers" in numbered
    assert "empty" in await err(tools, "str_replace", path="/memories/people/alice.md",
                                old_str="", new_str="x")


async def test_str_replace_may_not_break_the_header(filled: Store, tools: ToolSet) -> None:
    text = await err(tools, "str_replace", path="/memories/people/alice.md",
                     old_str="name: alice", new_str="name: alicia")
    assert "frontmatter" in text and "name: alice" in text
    assert filled.read("/memories/people/alice.md") == ALICE
    # Changing the description is fine.
    await ok(tools, "str_replace", path="/memories/people/alice.md",
             old_str="Alice, a colleague", new_str="Alice, a former colleague")


async def test_str_replace_on_missing_file(tools: ToolSet) -> None:
    assert "does not exist" in await err(tools, "str_replace", path="/memories/x.md",
                                         old_str="a", new_str="b")


# -- insert -------------------------------------------------------------------


async def test_insert_at_end_and_middle(filled: Store, tools: ToolSet) -> None:
    await ok(tools, "insert", path="/memories/people/alice.md", insert_line=12,
             insert_text="Has a cat.\n")
    text = await ok(tools, "insert", path="/memories/people/alice.md", insert_line=6,
                    insert_text="Born 1990.")
    assert "     7\tBorn 1990." in text
    lines = filled.read("/memories/people/alice.md").split("\n")
    assert lines[6] == "Born 1990."
    assert lines[-2:] == ["Has a cat.", ""]


async def test_insert_bounds(filled: Store, tools: ToolSet) -> None:
    for line in (-1, 13):
        text = await err(tools, "insert", path="/memories/people/alice.md", insert_line=line,
                         insert_text="x")
        assert "between 0 and 12" in text


async def test_insert_above_header_is_refused(filled: Store, tools: ToolSet) -> None:
    text = await err(tools, "insert", path="/memories/people/alice.md", insert_line=0,
                     insert_text="oops")
    assert "frontmatter" in text
    assert filled.read("/memories/people/alice.md") == ALICE


async def test_crlf_files_keep_their_line_endings(store: Store, tools: ToolSet) -> None:
    data = "---\r\nname: w\r\ndescription: d\r\n---\r\none\r\ntwo\r\n"
    (store.root / "w.md").write_bytes(data.encode())
    view = await ok(tools, "view", path="/memories/w.md")
    assert "\r" not in view and view.endswith("     6\ttwo")
    await ok(tools, "str_replace", path="/memories/w.md", old_str="one\ntwo", new_str="1\n2")
    await ok(tools, "insert", path="/memories/w.md", insert_line=6, insert_text="3")
    assert (store.root / "w.md").read_bytes() == data.replace("one\r\ntwo", "1\r\n2\r\n3").encode()


# -- delete -------------------------------------------------------------------


async def test_delete_file_folder_and_root(filled: Store, tools: ToolSet) -> None:
    assert "Deleted /memories/people/bob.md" in await ok(tools, "delete",
                                                         path="/memories/people/bob.md")
    text = await ok(tools, "delete", path="/memories/trips")
    assert "1 file(s)" in text
    assert filled.files() == ["/memories/people/alice.md"]
    assert "cannot be deleted" in await err(tools, "delete", path="/memories")
    assert "does not exist" in await err(tools, "delete", path="/memories/ghost.md")


# -- rename -------------------------------------------------------------------


async def test_rename_updates_the_name_for_a_new_stem(filled: Store, tools: ToolSet) -> None:
    await ok(tools, "rename", old_path="/memories/people/alice.md",
             new_path="/memories/work/alice-smith.md")
    text = filled.read("/memories/work/alice-smith.md")
    assert text == ALICE.replace("name: alice\n", "name: alice-smith\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\r\nname: old\r\ndescription: d\r\n---\r\nbody\r\n",
         "---\r\nname: new\r\ndescription: d\r\n---\r\nbody\r\n"),
        ('---\n"name": old\ndescription: d\nextra: 1\n---\nbody\n',
         "---\nname: new\ndescription: d\nextra: 1\n---\nbody\n"),
        ("no header at all\n", "no header at all\n"),
    ],
)
async def test_rename_name_update_edge_cases(
    store: Store, tools: ToolSet, text: str, expected: str
) -> None:
    (store.root / "old.md").write_bytes(text.encode())
    await ok(tools, "rename", old_path="/memories/old.md", new_path="/memories/new.md")
    assert (store.root / "new.md").read_bytes().decode() == expected


async def test_rename_keeps_bytes_when_the_stem_stays(filled: Store, tools: ToolSet) -> None:
    await ok(tools, "rename", old_path="/memories/people", new_path="/memories/contacts")
    assert filled.read("/memories/contacts/alice.md") == ALICE
    assert not filled.exists("/memories/people")


async def test_rename_errors(filled: Store, tools: ToolSet) -> None:
    assert "already exists" in await err(tools, "rename", old_path="/memories/people/alice.md",
                                         new_path="/memories/people/bob.md")
    assert "lowercase" in await err(tools, "rename", old_path="/memories/people/alice.md",
                                    new_path="/memories/people/Alice Smith.md")
    assert "does not exist" in await err(tools, "rename", old_path="/memories/x.md",
                                         new_path="/memories/y.md")
    assert "cannot be moved" in await err(tools, "rename", old_path="/memories",
                                          new_path="/memories/z")
    assert filled.read("/memories/people/bob.md").startswith("---\nname: bob")


def _digests(store: Store) -> dict[str, str]:
    return {
        p.rsplit("/", 1)[-1]: hashlib.sha256((store.root / p[10:]).read_bytes()).hexdigest()
        for p in store.files()
    }


async def test_folder_rename_moves_without_changing_bytes(filled: Store) -> None:
    tools = folder_set(filled)
    before = _digests(filled)
    await ok(tools, "rename", old_path="/memories/people/alice.md",
             new_path="/memories/friends/alice.md")
    await ok(tools, "rename", old_path="/memories/trips", new_path="/memories/travel")
    text = await err(tools, "rename", old_path="/memories/friends/alice.md",
                     new_path="/memories/friends/alicia.md")
    assert "keeps its file name" in text and "/memories/friends/alice.md" in text
    assert _digests(filled) == before
    assert filled.files() == [
        "/memories/friends/alice.md", "/memories/people/bob.md", "/memories/travel/2023/paris.md"
    ]


async def test_folder_set_cannot_edit(filled: Store) -> None:
    tools = folder_set(filled)
    result = await tools.call("create", {"path": "/memories/x.md", "file_text": "x"})
    assert result.is_error and "no tool named 'create'" in result.content


# -- toc and section_read -----------------------------------------------------


async def test_toc(filled: Store) -> None:
    tools = read_set(filled)
    text = await ok(tools, "toc", path="/memories/people/alice.md")
    assert text.splitlines() == [
        "/memories/people/alice.md: 12 lines - Alice, a colleague",
        "# Alice (lines 5-12)",
        "  ## Work (lines 7-9)",
        "  ## Home (lines 10-12)",
    ]
    assert "no headings" in await ok(tools, "toc", path="/memories/people/bob.md")
    assert "does not exist" in await err(tools, "toc", path="/memories/none.md")


async def test_section_read(filled: Store) -> None:
    tools = read_set(filled)
    text = await ok(tools, "section_read", path="/memories/people/alice.md",
                    heading_path=["Home"])
    assert text.splitlines() == [
        "/memories/people/alice.md > Alice > Home (lines 10-12):",
        "    10\t## Home",
        "    11\tLives in Oslo.",
        "    12\tLikes tea.",
    ]
    missing = await err(tools, "section_read", path="/memories/people/alice.md",
                        heading_path=["Garden"])
    assert "## Work (line 7)" in missing


async def test_section_read_ambiguous(store: Store) -> None:
    store.write("/memories/n.md", "---\nname: n\ndescription: d\n---\n# A\n## X\n# B\n## X\n")
    text = await err(read_set(store), "section_read", path="/memories/n.md", heading_path=["X"])
    assert "matches 2 sections" in text and "A > X (line 6)" in text
