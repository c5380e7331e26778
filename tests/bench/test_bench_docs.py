"""The Python examples of docs/datasets.md run as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from memdir.config import get_settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def test_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    if not (data / "locomo" / "locomo10.json").exists():
        pytest.skip("the LoCoMo file is not present on this machine")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks
    monkeypatch.setenv("MEMDIR_DATA_DIR", str(data))
    get_settings.cache_clear()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            for block in blocks:
                exec(compile(block, str(DOC), "exec"), {})
    finally:
        get_settings.cache_clear()
    assert out.getvalue().splitlines()[0] == "30 158"
    assert "58 chunks" in out.getvalue()  # conv-50 at the default budget (the table)
