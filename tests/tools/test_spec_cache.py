"""Tool sets over different stores share derived schemas but stay bound to their own store."""

from __future__ import annotations

from pathlib import Path

from memdir.store import Store
from memdir.tools import make_toolset, tool_spec

NOTE = "---\nname: note\ndescription: A note\n---\nhello from {}\n"


async def test_sets_share_schemas_yet_act_on_their_own_store(tmp_path: Path) -> None:
    a = Store(tmp_path / "a", create=True)
    b = Store(tmp_path / "b", create=True)
    a.create("/memories/note.md", NOTE.format("a"))
    b.create("/memories/note.md", NOTE.format("b"))
    set_a, set_b = make_toolset("read", a), make_toolset("read", b)
    assert set_a.infos() == set_b.infos()
    assert set_a.tools["view"].args_model is set_b.tools["view"].args_model
    seen_a = await set_a.call("view", {"path": "/memories/note.md"})
    seen_b = await set_b.call("view", {"path": "/memories/note.md"})
    assert "hello from a" in seen_a.content and "hello from b" in seen_b.content


def test_a_different_docstring_gets_its_own_schema() -> None:
    def make(doc: str):  # type: ignore[no-untyped-def]
        async def probe(x: int) -> str:
            return str(x)

        probe.__doc__ = doc
        return probe

    first = tool_spec(make("First tool.\n\nArgs:\n    x: a number"), read_only=True)
    second = tool_spec(make("Second tool.\n\nArgs:\n    x: a count"), read_only=True)
    assert first.description == "First tool."
    assert second.description == "Second tool."
    assert second.parameters["properties"]["x"]["description"] == "a count"
