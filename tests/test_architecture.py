"""Data flows one way: store <- tools <- agents <- builders/bench <- cli."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memdir"

# For each package, the memdir packages it must never import.
FORBIDDEN = {
    "conversation": {
        "tools", "agents", "builders", "bench", "cli", "server", "skills", "study", "metrics",
        "sample", "runs",
    },
    "store": {"tools", "agents", "builders", "bench", "cli", "server", "skills", "study", "runs"},
    "tools": {"agents", "builders", "bench", "cli", "server", "skills", "study", "runs"},
    "metrics": {"agents", "builders", "bench", "cli", "server", "skills", "study", "runs"},
    "agents": {"builders", "bench", "cli", "server", "study", "skills", "runs"},
    # The MCP server serves tools; the sample is data. Neither reaches agents or the CLI.
    "server": {
        "agents", "builders", "bench", "cli", "skills", "study", "metrics", "sample", "runs",
    },
    "sample": {
        "tools", "agents", "builders", "bench", "cli", "server", "skills", "study", "metrics",
        "runs",
    },
    "bench": {"cli", "server", "skills", "study", "runs"},
    "builders": {"cli", "server", "skills", "study", "runs"},
    # The run layer shared by the study and the skill setting: above agents, below both.
    "runs": {"builders", "bench", "cli", "server", "skills", "study"},
    "skills": {"cli", "server", "study", "bench", "builders"},
    "study": {"cli", "server", "skills"},
    # The browser reads every layer below the command line, and never the command line.
    "browse": {"cli"},
}
# Packages that must never load a model provider (only agents and above talk to models).
NO_PROVIDERS = {"conversation", "store", "tools", "metrics", "server", "sample"}
PROVIDERS = {"inspect_ai", "openai", "anthropic"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_point_one_way(package: str) -> None:
    folder = SRC / package
    if not folder.is_dir():
        pytest.skip(f"memdir.{package} does not exist yet")
    bad = []
    for path in sorted(folder.rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "memdir" and len(parts) > 1 and parts[1] in FORBIDDEN[package]:
                bad.append(f"{path.relative_to(SRC)} imports {name}")
            if package in NO_PROVIDERS and parts[0] in PROVIDERS:
                bad.append(f"{path.relative_to(SRC)} imports the model provider {name}")
    assert not bad, "\n".join(bad)


def test_the_table_renderer_stands_on_the_standard_library_alone() -> None:
    # metrics (below agents) renders its growth tables with it, as the reports do.
    names = _imports(SRC / "tables.py")
    assert not {n for n in names if n.split(".")[0] in {"memdir", *PROVIDERS}}


def test_the_rule_catches_a_violation(tmp_path: Path) -> None:
    sample = tmp_path / "bad.py"
    sample.write_text("from memdir.agents import loop\nimport inspect_ai.model\n")
    assert _imports(sample) == {"memdir.agents", "inspect_ai.model"}
