"""Two memory tools side by side: the Anthropic SDK's reference and memdir's profile.

Each command goes to ``BetaLocalFilesystemMemoryTool`` on one temporary folder
and to :class:`memdir.tools.anthropic.MemoryToolAdapter` on another; a
:class:`Pair` records what each answered and can compare the two trees.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anthropic.lib.tools._beta_functions import ToolError as ReferenceToolError
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool

from memdir.store import Store
from memdir.tools.anthropic import MemoryToolAdapter, Profile


@dataclass(frozen=True)
class Answer:
    """One tool's answer: whether it failed and the text a model would see."""

    is_error: bool
    text: str
    crashed: bool = False
    """The reference raised a Python exception other than its ToolError (its
    tool runner then sends the exception's repr; there is no wording to match)."""


def reference_answer(tool: BetaLocalFilesystemMemoryTool, command: dict[str, Any]) -> Answer:
    """Run a command the way the SDK's tool runner does (``_run_tool``)."""
    try:
        return Answer(False, str(tool.call(command)))
    except ReferenceToolError as exc:
        return Answer(True, str(exc.content))
    except Exception as exc:  # the runner turns any exception into an error result
        return Answer(True, repr(exc), crashed=True)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every visible folder (None), file (its bytes) and link (``->`` target) below ``root``."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(folder)
        for name in [*dirs, *files]:
            host = base / name
            rel = host.relative_to(root).as_posix()
            if name.startswith("."):
                continue
            if host.is_symlink():
                found[rel] = b"-> " + os.readlink(host).encode()
            elif host.is_dir():
                found[rel + "/"] = None
            else:
                found[rel] = host.read_bytes()
    return found


@dataclass
class Pair:
    """The reference and memdir on two fresh folders, and a tally of how they compared."""

    base: Path
    profile: Profile = "anthropic"
    max_file_bytes: int = 512 * 1024
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.reference = BetaLocalFilesystemMemoryTool(base_path=str(self.base / "reference"))
        self.reference_root = self.base / "reference" / "memories"
        # memdir keeps its lock in a hidden .memdir folder; the reference root gets an
        # empty one too so the two roots hold as many entries (their folder sizes,
        # which listings show, then agree on every file system).
        (self.reference_root / ".memdir").mkdir()
        self.store = Store(self.base / "memdir" / "memories", create=True,
                           max_file_bytes=self.max_file_bytes)
        self.adapter = MemoryToolAdapter(self.store, profile=self.profile)

    def run(self, command: dict[str, Any]) -> tuple[Answer, Answer]:
        """Send one command to both tools; return (reference, memdir)."""
        theirs = reference_answer(self.reference, command)
        result = self.adapter.handle_sync(
            {"type": "tool_use", "id": "toolu_x", "name": "memory", "input": command}
        )
        ours = Answer(bool(result["is_error"]), str(result["content"]))
        self.counts["commands"] += 1
        self.counts[f"{command.get('command')} {'error' if theirs.is_error else 'ok'}"] += 1
        if theirs.is_error == ours.is_error:
            self.counts["outcomes equal"] += 1
        if theirs.crashed:
            self.counts["reference raised (no text to match)"] += 1
            self.counts[f"reference raised {theirs.text.split('(')[0]}"] += 1
        elif theirs.text == ours.text:
            self.counts["texts equal"] += 1
        if self.trees_equal():
            self.counts["trees equal"] += 1
        return theirs, ours

    def trees_equal(self) -> bool:
        return tree(self.reference_root) == tree(self.store.root)
