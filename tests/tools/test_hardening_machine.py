"""A state machine over the write set, the shell tool and planted special files.

Invariants after every step: nothing outside the store root changed, no tool
raised (every mistake comes back as a tool result), and after a shell call the
store holds only plain files and folders (no link, FIFO, socket, setuid or
executable file).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memdir.store import Store
from memdir.tools._memory import write_set
from memdir.tools._sandbox import available_backends
from memdir.tools._shell import shell_set

pytestmark = pytest.mark.skipif(not available_backends(), reason="no shell confinement here")

NAMES = st.sampled_from(["a", "b", "people", "people/c", "x/y/z", "a.md", "link", "pipe"])
FILES = NAMES.map(lambda n: f"/memories/{n}.md" if not n.endswith(".md") else f"/memories/{n}")
FOLDERS = st.sampled_from(["/memories", "/memories/people", "/memories/x", "/memories/x/y"])


def _doc(path: str, body: str = "text") -> str:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return f"---\nname: {stem}\ndescription: about {stem}\n---\n{body}\n"


def _state(folder: Path, skip: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under ``folder`` but outside ``skip``: mode and bytes of regular files."""
    found: dict[str, tuple[int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip]
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            mode = path.lstat().st_mode
            found[str(path)] = (mode, path.read_bytes() if stat.S_ISREG(mode) else None)
    return found


class HardeningMachine(RuleBasedStateMachine):
    """Tools, shell commands and planted entries in any order."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="memdir-machine-"))
        self.host = self.tmp / "host"
        (self.host / "deep").mkdir(parents=True)
        (self.host / "secret.md").write_text(_doc("/secret.md", "host secret"))
        (self.host / "deep" / "d.md").write_text(_doc("/d.md", "deep secret"))
        self.store = Store(self.tmp / "store", create=True)
        self.outside = _state(self.tmp, self.store.root)
        self.tools = write_set(self.store)
        self.shell = shell_set(self.store, timeout=2.0, output_chars=2000)
        self.after_shell = False

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _call(self, name: str, args: dict[str, object]) -> None:
        result = asyncio.run(self.tools.call(name, args))
        assert result.content  # a result, error or not, never an exception

    @rule(path=FILES, body=st.text(max_size=30))
    def create(self, path: str, body: str) -> None:
        self._call("create", {"path": path, "file_text": _doc(path, body)})

    @rule(path=FILES, old=st.sampled_from(["text", "about", "name"]), new=st.text(max_size=10))
    def str_replace(self, path: str, old: str, new: str) -> None:
        self._call("str_replace", {"path": path, "old_str": old, "new_str": new})

    @rule(path=FILES, line=st.integers(-1, 8))
    def insert(self, path: str, line: int) -> None:
        self._call("insert", {"path": path, "insert_line": line, "insert_text": "more"})

    @rule(path=st.one_of(FILES, FOLDERS))
    def delete(self, path: str) -> None:
        self._call("delete", {"path": path})

    @rule(src=st.one_of(FILES, FOLDERS), dst=st.one_of(FILES, FOLDERS))
    def rename(self, src: str, dst: str) -> None:
        self._call("rename", {"old_path": src, "new_path": dst})

    @rule(path=st.one_of(FILES, FOLDERS))
    def view(self, path: str) -> None:
        self._call("view", {"path": path})

    @rule(path=FOLDERS)
    def grep(self, path: str) -> None:
        self._call("grep", {"pattern": "secret|text", "path": path})

    @rule(command=st.sampled_from([
        "ln -s {host} people",
        "ln -s {host}/secret.md link.md",
        "mkdir -p x && ln -s / x/y",
        "mkfifo pipe.md",
        "cp /usr/bin/id a.md; chmod 4755 a.md",
        "mkdir -p people && chmod 6777 people",
        "mv people aside; ln -s {host} people",
        "rm -rf x people",
        "mkdir -p x/y && printf -- '---\\nname: z\\ndescription: z\\n---\\n' > x/y/z.md",
    ]))
    def shell_call(self, command: str) -> None:
        result = asyncio.run(self.shell.call("bash", {"command": command.format(host=self.host)}))
        assert result.content
        self.after_shell = True

    @rule(what=st.sampled_from(["link-dir", "link-file", "fifo", "socket-name"]))
    def plant(self, what: str) -> None:
        # A host process plants entries directly (no lock, no tool).
        root = self.store.root
        target = root / ("people" if what == "link-dir" else f"{what}.md")
        if target.exists() or target.is_symlink():
            return
        if what == "link-dir":
            target.symlink_to(self.host)
        elif what == "link-file":
            target.symlink_to(self.host / "secret.md")
        else:
            os.mkfifo(target)

    @invariant()
    def nothing_outside_changed(self) -> None:
        assert _state(self.tmp, self.store.root) == self.outside

    @invariant()
    def a_shell_call_leaves_only_plain_entries(self) -> None:
        if not self.after_shell:
            return
        self.after_shell = False
        for dirpath, dirnames, filenames in os.walk(self.store.root):
            for name in dirnames + filenames:
                mode = os.lstat(os.path.join(dirpath, name)).st_mode
                assert stat.S_ISDIR(mode) or stat.S_ISREG(mode), name
                assert not mode & (stat.S_ISUID | stat.S_ISGID)
                assert stat.S_ISDIR(mode) or not mode & 0o111


TestHardeningMachine = HardeningMachine.TestCase
TestHardeningMachine.settings = settings(
    max_examples=10, stateful_step_count=15, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
