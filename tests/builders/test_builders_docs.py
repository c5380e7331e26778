"""The examples in docs/builders.md run and the YAML fragment is a valid study config."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from memdir.study import StudyConfig

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def _blocks(kind: str) -> list[str]:
    return [body for k, body in FENCE.findall((ROOT / "docs/builders.md").read_text())
            if k == kind]


def test_the_python_example_runs() -> None:
    (example,) = _blocks("python")
    namespace: dict[str, object] = {}
    exec(compile(example, "docs/builders.md", "exec"), namespace)
    assert namespace["again"] is not namespace["built"]


def test_the_yaml_fragment_is_a_valid_config(tmp_path: Path) -> None:
    (fragment,) = _blocks("yaml")
    data = yaml.safe_load(fragment)
    config = StudyConfig.model_validate({
        "name": "doc", "benchmarks": [{"name": "locomo", "conversations": ["conv-50"]}],
        "search": {"models": ["memdir/grep-reader"]}, **data})
    assert config.reorganize_passes == 5 and config.build_cache is None
    assert {c.variant for c in config.cells()} == set(data["variants"])
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        StudyConfig.model_validate({**config.model_dump(), "reorganize_passes": 0})
