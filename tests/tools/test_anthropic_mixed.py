"""A store Claude wrote through the anthropic profile, seen through memdir's own tools.

Nothing is hidden: the native listing shows every file, lint warns about a
missing header and --fix adds one, and every hint names a change that works
when it is carried out.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.store import Store, lint_store
from memdir.tools import ToolError, make_toolset
from memdir.tools._memory import MemoryCommands
from memdir.tools.anthropic import MemoryToolAdapter


async def claude_writes(store: Store) -> None:
    """The files Claude typically writes, created through the anthropic profile."""
    adapter = MemoryToolAdapter(store)
    for path, text in [
        ("/memories/progress.md", "# Progress\n- [x] read the brief\n"),
        ("/memories/user_preferences.md", "Prefers terse answers.\n"),
        ("/memories/notes.xml", "<notes/>\n"),
    ]:
        result = await adapter.handle({"type": "tool_use", "id": "t", "name": "memory",
                                      "input": {"command": "create", "path": path,
                                                "file_text": text}})
        assert not result["is_error"], result


async def test_the_native_listing_shows_every_file(store: Store) -> None:
    await claude_writes(store)
    listing = await MemoryCommands(store).view("/memories")
    assert listing.splitlines() == [
        "/memories: 3 file(s) in 0 folder(s) (size, description):",
        "notes.xml (9 B) - not markdown, so search skips it; rename it to notes.md to read "
        "and edit it here",
        "progress.md (32 B) - (no description)",
        "user_preferences.md (23 B) - (no description)",
    ]


async def test_the_hint_for_a_non_markdown_file_works(store: Store) -> None:
    await claude_writes(store)
    commands = MemoryCommands(store)
    with pytest.raises(ToolError) as caught:
        await commands.view("/memories/notes.xml")
    message = str(caught.value)
    assert "rename(old_path='/memories/notes.xml', new_path='/memories/notes.md')" in message
    await commands.rename("/memories/notes.xml", "/memories/notes.md")
    assert "<notes/>" in await commands.view("/memories/notes.md")


async def test_native_tools_edit_files_without_frontmatter(store: Store) -> None:
    await claude_writes(store)
    tools = make_toolset("write", store)
    result = await tools.call("str_replace", {"path": "/memories/progress.md",
                                              "old_str": "- [x] read the brief",
                                              "new_str": "- [x] read the brief\n- [ ] plan"})
    assert not result.is_error, result.content
    assert store.read("/memories/progress.md").endswith("- [ ] plan\n")


async def test_a_create_hint_for_a_bad_name_names_a_name_that_works(store: Store) -> None:
    commands = MemoryCommands(store)
    header = "---\nname: user_preferences\ndescription: What the user likes\n---\n"
    with pytest.raises(ToolError) as caught:
        await commands.create("/memories/user_preferences.md", header)
    message = str(caught.value)
    assert "name: user_preferences" not in message
    assert "Create /memories/user-preferences.md instead" in message
    suggested = message.split("starting with:\n", 1)[1]
    fixed = suggested.replace("<one line saying what the file holds>", "What the user likes")
    assert (await commands.create("/memories/user-preferences.md", fixed)).startswith("Created")
    assert lint_store(store) == []


def test_lint_warns_and_fix_adds_a_header(store: Store) -> None:
    asyncio.run(claude_writes(store))
    findings = {f.path: f for f in lint_store(store)}
    progress = findings["/memories/progress.md"]
    assert (progress.code, progress.severity, progress.fixable) == (
        "missing-frontmatter", "warning", True)
    prefs = findings["/memories/user_preferences.md"]
    assert prefs.severity == "warning" and not prefs.fixable
    assert "Rename the file to /memories/user-preferences.md" in prefs.message

    runner = CliRunner()
    result = runner.invoke(app, ["lint", str(store.root), "--fix", "--json"])
    payload = json.loads(result.stdout)
    assert [f["path"] for f in payload["fixed"]] == ["/memories/progress.md"]
    assert store.read("/memories/progress.md") == (
        "---\nname: progress\ndescription: Progress\n---\n# Progress\n- [x] read the brief\n"
    )
    codes = {(f["path"], f["code"], f["severity"]) for f in payload["findings"]}
    assert codes == {("/memories/user_preferences.md", "missing-frontmatter", "warning"),
                     ("/memories/notes.xml", "not-markdown", "error")}


def test_lint_exits_zero_when_only_warnings_remain(tmp_path: Path) -> None:
    store = Store(tmp_path / "memories", create=True)
    (store.root / "progress.md").write_text("# Progress\n")
    result = CliRunner().invoke(app, ["lint", str(store.root)])
    assert result.exit_code == 0, result.stdout
    assert "missing-frontmatter (warning)" in result.stdout
    assert "no defects, 1 warning(s)" in result.stdout
