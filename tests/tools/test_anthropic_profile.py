"""The anthropic profile's path handling: whatever a model writes, nothing leaves the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store import ANY_NAME, PathError, Store, resolve
from memdir.tools import ToolError
from memdir.tools._anthropic_profile import AnthropicMemoryCommands

PIECES = st.sampled_from(["..", ".", "", "a", "b.xml", ".hidden", "memories", "c d", "\\", "é"])


@st.composite
def paths(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["/memories", "/memories/", "/memoriesx", "/", "", "memories/"]))
    return head + "/".join(draw(st.lists(PIECES, max_size=5)))


@settings(max_examples=300, deadline=None)
@given(path=paths())
def test_every_path_is_refused_or_lands_inside_the_root(tmp_path_factory: pytest.TempPathFactory,
                                                         path: str) -> None:
    root = tmp_path_factory.mktemp("s") / "memories"
    commands = AnthropicMemoryCommands(Store(root, create=True))
    try:
        parts = commands._locate(path)
    except ToolError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    real = os.path.realpath(commands.store.root.joinpath(*parts))
    assert real == str(commands.store.root) or real.startswith(str(commands.store.root) + "/")
    assert not any(part.startswith(".") or "/" in part or part == "" for part in parts)


def test_the_any_name_policy_lifts_only_the_markdown_rule(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    root.mkdir()
    assert resolve(root, "/memories/notes.xml", "any", ANY_NAME).host == root / "notes.xml"
    assert resolve(root, "/memories/scratch", "any", ANY_NAME).virtual == "/memories/scratch"
    with pytest.raises(PathError, match="not a markdown file"):
        resolve(root, "/memories/notes.xml")
    for bad in ["/memories/../x", "/memories/.memdir/lock", "/etc/passwd", "/memories/a\x00"]:
        with pytest.raises(PathError):
            resolve(root, bad, "any", ANY_NAME)
    with pytest.raises(PathError, match="root folder"):
        resolve(root, "/memories", "file", ANY_NAME)
    (root / "out").symlink_to(tmp_path)
    with pytest.raises(PathError, match="symbolic link"):
        resolve(root, "/memories/out/x.txt", "any", ANY_NAME)


async def test_a_link_is_never_read_written_or_followed(tmp_path: Path) -> None:
    store = Store(tmp_path / "memories", create=True)
    (store.root / "real.txt").write_text("kept\n")
    (store.root / "alias.txt").symlink_to(store.root / "real.txt")
    commands = AnthropicMemoryCommands(store)
    for call in (commands.view("/memories/alias.txt"),
                 commands.str_replace("/memories/alias.txt", "kept", "gone"),
                 commands.insert("/memories/alias.txt", 0, "x")):
        with pytest.raises(ToolError, match="symbolic link"):
            await call
    assert (store.root / "real.txt").read_text() == "kept\n"
    listing = await commands.view("/memories")
    assert "alias.txt" not in listing and "real.txt" in listing
