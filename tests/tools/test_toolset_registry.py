"""Every registered tool set builds, and every tool in it carries its own flags.

The flags live on the tool function (``@tool_flags``), so a set cannot restate them
differently; set-level facts are derived from them. Building one set loads only its
own module, and a tool without flags is refused.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memdir.store import Store
from memdir.tools import TOOLSET_NAMES, TOOLSETS, ToolSet, make_toolset, tool_flags, tool_spec
from memdir.tools._sandbox import available_backends
from memdir.tools._spec import _FLAGS


def _build(name: str, store: Store) -> ToolSet:
    if name == "shell":
        from memdir.tools import shell_set

        return shell_set(store, allow_unconfined=True)  # the flags do not depend on it
    if name == "shell-read" and not available_backends():
        pytest.skip("a read-only shell needs a confinement (bubblewrap or unshare)")
    return make_toolset(name, store)


def test_the_registry_is_the_list_of_names() -> None:
    assert TOOLSET_NAMES == tuple(TOOLSETS)
    assert set(TOOLSET_NAMES) == {"write", "read", "bm25", "bm25-write", "bm25-folder", "chunk",
                                  "shell", "shell-read", "folder", "anthropic"}


@pytest.mark.parametrize("name", TOOLSET_NAMES)
def test_every_tool_of_every_set_declares_its_flags(name: str, store: Store) -> None:
    toolset = _build(name, store)
    assert toolset.name == name and toolset.tools
    for spec in toolset.tools.values():
        flags = getattr(spec.fn, _FLAGS, None)
        assert flags == (spec.read_only, spec.destructive), f"{name}.{spec.name}"
        assert not (spec.read_only and spec.destructive), f"{name}.{spec.name}"


def test_set_level_facts_are_derived_from_the_tools(store: Store) -> None:
    names = [n for n in TOOLSET_NAMES if n != "shell-read" or available_backends()]
    read_only = {name: _build(name, store).read_only for name in names}
    assert read_only == {"write": False, "read": True, "bm25": True, "bm25-write": False,
                         "bm25-folder": False, "chunk": True, "shell": False,
                         "folder": False, "anthropic": False,
                         **({"shell-read": True} if "shell-read" in names else {})}
    assert {n for n in names if any(
        s.destructive for s in _build(n, store).tools.values())} == {"write", "bm25-write",
                                                                      "shell", "anthropic"}


def test_an_unknown_set_is_refused_with_the_list(store: Store) -> None:
    with pytest.raises(ValueError, match="unknown tool set 'grep'; choose one of write, read"):
        make_toolset("grep", store)


def test_a_tool_without_flags_is_refused() -> None:
    async def echo(text: str) -> str:
        """Say it back.

        Args:
            text: What to say back to the caller.
        """
        return text

    with pytest.raises(TypeError, match="declares no flags"):
        tool_spec(echo)
    spec = tool_spec(tool_flags(read_only=True)(echo))
    assert spec.read_only and not spec.destructive
    assert tool_spec(echo, read_only=False).read_only is False  # an explicit flag wins


def _loaded_after(statements: str) -> list[str]:
    code = (f"import json, sys, tempfile; from memdir.store import Store; {statements}; "
            "print(json.dumps(sorted(m for m in ('numpy', 'memdir.tools._ranked', "
            "'memdir.tools._shell') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    loaded: list[str] = json.loads(out)
    return loaded


def test_building_one_set_loads_no_other_sets_dependencies() -> None:
    if _loaded_after("import memdir.tools"):
        pytest.skip("memdir.tools still imports every set when imported (its lazy imports, "
                    "issue 13, are not in this tree yet)")
    assert _loaded_after("from memdir.tools import make_toolset; "
                         "make_toolset('read', Store(tempfile.mkdtemp()))") == []
    assert _loaded_after("from memdir.tools import make_toolset; "
                         "make_toolset('chunk', Store(tempfile.mkdtemp()))") == [
        "memdir.tools._ranked", "numpy"]  # the ranked index's arrays (bm25s itself never loads)
