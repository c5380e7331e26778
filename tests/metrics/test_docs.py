"""The examples in docs/metrics.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_python_examples_run(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks, "docs/metrics.md lost its example"
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {"workdir": tmp_path})  # noqa: S102
    assert (tmp_path / "memories" / ".git").is_dir()
