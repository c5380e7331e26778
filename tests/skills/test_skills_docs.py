"""The example in docs/skills.md runs, so the documented orders cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def test_the_orders_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (ROOT.parent / "shared/data/alfworld/valid_seen").is_dir():
        pytest.skip("../shared/data/alfworld/valid_seen is not present on this machine")
    blocks = [body for kind, body in FENCE.findall((ROOT / "docs/skills.md").read_text())
              if kind == "python" and "full_chain_order" in body]
    assert len(blocks) == 1
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "docs/skills.md", "exec"), namespace)
    order = namespace["order"]
    assert isinstance(order, list) and len(order) == 140
