"""The searchers' shell: the same bash over a store it cannot change.

Runs once per confinement that works here (bubblewrap, unshare) and skips with
the reason where neither does. The writable shell over the same store is the
control: every command refused by the read-only one goes through there.
"""

from __future__ import annotations

import pytest

from memdir.store import Store
from memdir.tools import make_toolset
from memdir.tools._sandbox import Backend, available_backends
from memdir.tools._shell import SandboxUnavailableError, shell_set
from memdir.tools._spec import ToolSet

WORKING = available_backends()
ALICE = "---\nname: alice\ndescription: About alice\n---\nAlice likes tea.\n"
CHANGES = {
    "write": "echo 'Bob likes cake.' > /memories/people/bob.md",
    "rm": "rm /memories/people/alice.md",
    "mv": "mv /memories/people/alice.md /memories/alice.md",
    "chmod": "chmod 640 /memories/people/alice.md",  # new files are 0600: a real change
    "sed -i": "sed -i 's/tea/coffee/' /memories/people/alice.md",
    "mkdir": "mkdir /memories/places",
}


def _snapshot(store: Store) -> dict[str, tuple[str, int, int]]:
    """Every entry of the store: kind, modification time and mode bits."""
    return {"/".join(n.parts): (n.kind, n.mtime_ns,
                                store.root.joinpath(*n.parts).lstat().st_mode)
            for n in store.tree(hidden=True)}


async def _bash(tools: ToolSet, command: str) -> str:
    result = await tools.call("bash", {"command": command})
    assert not result.is_error, result.content
    return result.content


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_a_read_only_shell_cannot_change_the_store(backend: Backend, store: Store,
                                                         change: str) -> None:
    store.write("/memories/people/alice.md", ALICE)
    before = _snapshot(store)
    tools = shell_set(store, timeout=5.0, backend=backend, read_only=True)
    out = await _bash(tools, CHANGES[change])
    assert "Read-only file system" in out, out
    assert "[exit status 0]" not in out
    assert _snapshot(store) == before
    assert store.read("/memories/people/alice.md") == ALICE


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_the_writable_shell_makes_the_same_changes(backend: Backend, store: Store,
                                                         change: str) -> None:
    store.write("/memories/people/alice.md", ALICE)
    before = _snapshot(store)
    out = await _bash(shell_set(store, timeout=5.0, backend=backend), CHANGES[change])
    assert "[exit status 0]" in out, out
    assert _snapshot(store) != before


async def test_a_read_only_shell_still_reads_and_searches(backend: Backend, store: Store) -> None:
    store.write("/memories/people/alice.md", ALICE)
    tools = shell_set(store, timeout=5.0, backend=backend, read_only=True)
    out = await _bash(tools, "grep -rn tea /memories && cat -n people/alice.md | tail -1")
    assert "/memories/people/alice.md:5:Alice likes tea." in out
    assert "5\tAlice likes tea." in out


def test_the_read_only_set_is_declared_and_described_read_only(store: Store) -> None:
    if not WORKING:
        pytest.skip("no confinement works on this machine")
    tools = make_toolset("shell-read", store)
    bash = tools.tools["bash"]
    assert tools.name == "shell-read" and tools.read_only
    assert bash.read_only and not bash.destructive
    assert "mounted read-only at /memories" in bash.description
    assert "sed -i" not in bash.description and "fix those" not in bash.description
    writable = make_toolset("shell", store)
    assert not writable.read_only and writable.tools["bash"].destructive
    assert "sed -i" in writable.tools["bash"].description


def test_a_read_only_shell_is_refused_unconfined(store: Store) -> None:
    with pytest.raises(SandboxUnavailableError, match="read-only shell needs bubblewrap"):
        shell_set(store, backend="unconfined", allow_unconfined=True, read_only=True)
