"""The hardening state machine with the Anthropic memory tool profile's commands added.

Same invariants as ``test_hardening_machine.py`` (nothing outside the root
changes, no command raises, a shell call leaves only plain entries), now also
over the profile's six commands on names of any extension, folders planted as
links to the host, FIFOs and the shell's swaps.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import rule
from test_hardening_machine import HardeningMachine, pytestmark  # noqa: F401 - skip rule

from memdir.tools.anthropic import MemoryToolAdapter

PATHS = st.sampled_from([
    "/memories", "/memories/a", "/memories/notes.xml", "/memories/people",
    "/memories/people/c.txt", "/memories/people/secret.md", "/memories/x/y/z",
    "/memories/x/y/secret.md", "/memories/link.md", "/memories/pipe.md", "/memories/a.md",
    "/memories/fresh/n.txt", "/memories/moved", "/memories/people/new.txt",
])
STEPS: Counter[str] = Counter()
"""Commands sent per outcome, over every run of the machine (for a longer run's report)."""


class AnthropicHardeningMachine(HardeningMachine):
    """The write set, the shell and planted entries, plus memory_20250818 commands."""

    def __init__(self) -> None:
        super().__init__()
        self.adapter = MemoryToolAdapter(self.store)

    @rule(command=st.sampled_from(["view", "create", "str_replace", "insert", "delete",
                                   "rename"]),
          path=PATHS, other=PATHS, text=st.text(alphabet="ab\n#", max_size=12))
    def anthropic(self, command: str, path: str, other: str, text: str) -> None:
        fields: dict[str, Any] = {
            "view": {"path": path},
            "create": {"path": path, "file_text": text},
            "str_replace": {"path": path, "old_str": "a", "new_str": text},
            "insert": {"path": path, "insert_line": 1, "insert_text": text},
            "delete": {"path": path},
            "rename": {"old_path": path, "new_path": other},
        }[command]
        result = self.adapter.handle_sync({"type": "tool_use", "id": "toolu_h", "name": "memory",
                                           "input": {"command": command, **fields}})
        assert result["content"]  # a result, error or not, never an exception
        assert "secret" not in str(result["content"]).replace("secret.md", "")
        STEPS[f"{command} {'error' if result['is_error'] else 'ok'}"] += 1


TestAnthropicHardeningMachine = AnthropicHardeningMachine.TestCase
TestAnthropicHardeningMachine.settings = settings(
    max_examples=10, stateful_step_count=20, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
