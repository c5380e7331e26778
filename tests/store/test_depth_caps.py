"""Issue 19, item 6: new entries are capped in depth and path length; deep trees still work.

Every act that makes a name (memdir's create and rename/move, the anthropic
profile's create and rename, ``Store.write`` and ``Store.rename``) refuses one
deeper than ``MAX_DEPTH`` or longer than ``MAX_PATH_BYTES`` with a message that
says what to do, before it makes any folder. A tree deeper than that, made by a
shell command or by hand, is still listed, drawn, searched, edited and removed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.store import MAX_DEPTH, MAX_PATH_BYTES, PathError, Store, lint_store
from memdir.tools import make_toolset, write_set
from memdir.tools.anthropic import MemoryToolAdapter

DOC = "---\nname: {name}\ndescription: A note\n---\nbody\n"


def _deep(levels: int, name: str = "n.md") -> str:
    return "/memories/" + "d/" * levels + name


def _entries(store: Store) -> list[str]:
    return sorted(str(p.relative_to(store.root)) for p in store.root.rglob("*")
                  if ".memdir" not in p.parts)


async def test_create_at_the_cap_works_and_past_it_is_refused(store: Store) -> None:
    tools = write_set(store)
    ok = await tools.call("create", {"path": _deep(MAX_DEPTH - 1),
                                     "file_text": DOC.format(name="n")})
    assert not ok.is_error, ok.content
    store.delete("/memories/d")
    refused = await tools.call("create", {"path": _deep(MAX_DEPTH),
                                          "file_text": DOC.format(name="n")})
    assert refused.is_error
    assert f"would put an entry {MAX_DEPTH + 1} levels below /memories" in refused.content
    assert f"at most {MAX_DEPTH} levels deep: use fewer folders, e.g." in refused.content
    assert _entries(store) == []  # not one folder was made on the way


async def test_a_long_path_is_refused_before_anything_is_made(store: Store) -> None:
    name = "x" * 200
    path = "/memories/" + "/".join([name] * 6) + "/n.md"
    result = await write_set(store).call("create", {"path": path,
                                                    "file_text": DOC.format(name="n")})
    assert result.is_error
    assert f"at most {MAX_PATH_BYTES:,} bytes. Use shorter folder and file names" in (
        result.content)
    assert _entries(store) == []


async def test_rename_and_move_are_capped_counting_the_folder_moved(store: Store) -> None:
    store.write("/memories/top/" + "d/" * 20 + "n.md", DOC.format(name="n"))
    tools = write_set(store)
    deep_target = "/memories/" + "e/" * 12 + "top"  # 13 + 21 levels
    for set_name in ("write", "folder"):
        moved = await make_toolset(set_name, store).call(
            "rename", {"old_path": "/memories/top", "new_path": deep_target})
        assert moved.is_error, moved.content
        assert "the folder holds entries 21 levels inside it, so move it at most 11" in (
            moved.content)
    file_move = await tools.call("rename", {"old_path": "/memories/top/" + "d/" * 20 + "n.md",
                                            "new_path": _deep(MAX_DEPTH)})
    assert file_move.is_error and "levels deep" in file_move.content
    assert _entries(store)[-1] == "top/" + "d/" * 20 + "n.md"
    assert not (store.root / "e").exists()
    ok = await tools.call("rename", {"old_path": "/memories/top", "new_path": "/memories/a/top"})
    assert not ok.is_error, ok.content


def test_store_write_caps_new_files_but_edits_existing_deep_ones(
    store: Store, deep_tree: Callable[..., str]
) -> None:
    with pytest.raises(PathError, match="levels deep"):
        store.write(_deep(MAX_DEPTH + 5), DOC.format(name="n"))
    path = deep_tree(store.root, MAX_DEPTH + 5, "n.md", DOC.format(name="n"))
    try:
        store.write(path, DOC.format(name="n") + "more\n")  # it exists: an edit, not a new name
        assert store.read(path).endswith("more\n")
        store.edit(path, lambda text: text + "again\n")
        assert store.read(path).endswith("again\n")
    finally:
        store.delete("/memories/d")


def _block(path: str, command: str, **fields: object) -> dict[str, object]:
    return {"type": "tool_use", "id": "t", "name": "memory",
            "input": {"command": command, "path": path, **fields}}


async def test_anthropic_profile_caps_create_and_rename(store: Store) -> None:
    adapter = MemoryToolAdapter(store)
    made = await adapter.handle(_block(_deep(MAX_DEPTH, "n.txt"), "create", file_text="x"))
    assert made["is_error"] and "levels deep" in made["content"]
    assert _entries(store) == []
    long_name = "/memories/" + "/".join(["y" * 250] * 5)
    made = await adapter.handle(_block(long_name, "create", file_text="x"))
    assert made["is_error"] and "bytes" in made["content"]
    assert _entries(store) == []
    await adapter.handle(_block("/memories/top/" + "d/" * 20 + "n.txt", "create",
                                file_text="x"))
    moved = await adapter.handle({"type": "tool_use", "id": "t", "name": "memory", "input": {
        "command": "rename", "old_path": "/memories/top",
        "new_path": "/memories/" + "e/" * 12 + "top"}})
    assert moved["is_error"] and "21 levels inside it" in moved["content"]
    assert not (store.root / "e").exists()


async def test_anthropic_profile_still_serves_an_existing_deep_file(
    store: Store, deep_tree: Callable[..., str]
) -> None:
    path = deep_tree(store.root, MAX_DEPTH + 8, "n.txt", "hello\n")
    adapter = MemoryToolAdapter(store)
    try:
        again = await adapter.handle(_block(path, "create", file_text="x"))
        assert again["content"] == f"File {path} already exists"  # the reference's answer
        seen = await adapter.handle(_block(path, "view"))
        assert seen["content"].endswith("1\thello\n     2\t")
        edit = await adapter.handle(_block(path, "str_replace", old_str="hello", new_str="bye"))
        assert not edit["is_error"], edit["content"]
    finally:
        gone = await adapter.handle(_block("/memories/d", "delete"))
    assert gone["content"] == "Successfully deleted /memories/d"
    assert _entries(store) == []


async def test_a_thousand_levels_made_by_hand_still_work(
    store: Store, deep_tree: Callable[..., str]
) -> None:
    path = deep_tree(store.root, 1000, "n.md", DOC.format(name="n"))
    try:
        assert len(store.walk()) == 1001
        assert lint_store(store) == []
        tree = CliRunner().invoke(app, ["tree", str(store.root)])
        assert tree.exit_code == 0, tree.output
        assert tree.output.rstrip().endswith("1000 folder(s), 1 file(s)")
        assert "n.md" in tree.output
        tools = write_set(store)
        listing = await tools.call("view", {"path": "/memories"})
        assert not listing.is_error and "1 file(s) in 1000 folder(s)" in listing.content
        seen = await tools.call("view", {"path": path})
        assert "body" in seen.content
        edit = await tools.call("str_replace", {"path": path, "old_str": "body",
                                                "new_str": "text"})
        assert not edit.is_error, edit.content
        grep = await tools.call("grep", {"pattern": "text"})
        assert path in grep.content
        ref = await MemoryToolAdapter(store).handle(_block("/memories", "view"))
        assert ref["content"].splitlines()[-1] == "4K\t/memories/d/d/"
    finally:
        store.delete("/memories/d")
    assert store.walk() == []
