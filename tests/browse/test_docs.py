"""The example in docs/browse.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

from memdir.cli.browse import parse_conversation

DOC = Path(__file__).resolve().parents[2] / "docs" / "browse.md"


def test_python_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks, "docs/browse.md lost its example"
    scope: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), scope)  # noqa: S102
    workdir = scope["workdir"]
    assert isinstance(workdir, Path)
    assert (workdir / "memories" / "people" / "maya.md").is_file()


def test_the_console_example_names_a_conversation_that_loads() -> None:
    conversation = parse_conversation("sample", None)
    assert getattr(conversation, "id", None) == "sample"
    assert "S1T2" in conversation.locators()  # type: ignore[union-attr]
