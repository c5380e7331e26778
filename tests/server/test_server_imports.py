"""The server and the sample sit low in the import graph: they never reach agents or the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "memdir"
ALLOWED = {"server": {"store", "tools"}, "sample": {"store"}}
PROVIDERS = {"inspect_ai", "openai", "anthropic"}


def _memdir_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_lower_layers(package: str) -> None:
    bad = []
    for path in sorted((SRC / package).rglob("*.py")):
        for name in _memdir_imports(path):
            parts = name.split(".")
            if parts[0] in PROVIDERS:
                bad.append(f"{path.name} imports the model provider {name}")
            if parts[0] == "memdir" and len(parts) > 1 and parts[1] != package \
                    and parts[1] not in ALLOWED[package]:
                bad.append(f"{path.name} imports {name}")
    assert not bad, "\n".join(bad)
    assert any((SRC / package).rglob("*.py"))
