"""The examples in docs/anthropic.md run as written and print what the doc shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from memdir.store import Store

DOC = Path(__file__).resolve().parents[2] / "docs" / "anthropic.md"


def test_the_examples_run_and_print_what_the_doc_says() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 2, "docs/anthropic.md lost an example"
    scope: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], str(DOC), "exec"), scope)  # noqa: S102
    shown = [line[2:] for line in blocks[0].splitlines() if line.startswith("# ")]
    assert [line.rstrip() for line in out.getvalue().splitlines()] == [
        line.rstrip() for line in shown
    ]
    workdir = scope["workdir"]  # the example makes its own folder
    assert isinstance(workdir, Path)
    assert (workdir / "memories" / "progress.md").is_file()

    pytest.importorskip("anthropic")
    exec(compile(blocks[1], str(DOC), "exec"), scope)  # noqa: S102
    tool = scope["sdk_memory_tool"](Store(workdir / "memories"))  # type: ignore[operator]
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.call({"command": "view", "path": "/memories/progress.md"}).startswith(
        "Here's the content of /memories/progress.md"
    )
