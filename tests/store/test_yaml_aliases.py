"""Issue 19, item 1: a header alias that names the value it sits in is refused at once.

``metadata: &m {self: *m}`` composes to a node that contains itself; expanding
it never ends. Each check runs in a child process with a wall-clock timeout and
an address-space cap, so code that loops fails the test instead of filling the
machine; the commands run as a user would run them (``python -m memdir``).
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.store import parse_file

CYCLES = [
    "metadata: &m {self: *m}",
    "metadata: &m [1, *m]",
    "metadata: &a {b: &b {c: *a}}",
    "metadata: &a {b: &b [*b]}",
    "metadata: &m\n  k: *m",
    "metadata:\n  x: &x\n    - y: *x",
]
LIMIT_SECONDS = 60
LIMIT_BYTES = 1 << 30


def _bounded(args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))

    return subprocess.run(args, input=stdin, capture_output=True, text=True,
                          timeout=LIMIT_SECONDS, preexec_fn=cap)


def _file(header: str) -> str:
    return f"---\nname: x\ndescription: d\n{header}\n---\n# Title\nbody\n"


def test_every_cycle_is_refused_by_the_one_parser() -> None:
    code = (
        "import sys, json\n"
        "from memdir.store import parse_file\n"
        "out = [[d.code for d in parse_file(t, 'x').defects] for t in json.load(sys.stdin)]\n"
        "print(json.dumps(out))\n"
    )
    done = _bounded([sys.executable, "-c", code], json.dumps([_file(h) for h in CYCLES]))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [["invalid-yaml"]] * len(CYCLES)


def test_the_refusal_says_what_to_do() -> None:
    (defect,) = parse_file(_file(CYCLES[0]), "x").defects
    assert "alias inside the value it names" in defect.message
    assert "write the value out" in defect.message


@pytest.mark.parametrize("header", [
    "metadata: {a: &x [1, 2], b: *x, c: [*x, *x]}",
    "metadata:\n  base: &b {k: v}\n  one: *b\n  two: {inner: *b}",
])
def test_shared_aliases_that_end_still_parse(header: str) -> None:
    parsed = parse_file(_file(header), "x")
    assert parsed.defects == []
    assert parsed.frontmatter is not None and parsed.frontmatter.metadata


@pytest.mark.parametrize("command", [["lint"], ["tree"], ["tree", "--json"], ["lint", "--json"]])
def test_store_commands_answer_on_a_store_holding_the_bomb(tmp_path: Path,
                                                          command: list[str]) -> None:
    root = tmp_path / "memories"
    root.mkdir()
    (root / "x.md").write_text(_file(CYCLES[0]))
    (root / "y.md").write_text(_file(CYCLES[1]).replace("name: x", "name: y"))
    done = _bounded([sys.executable, "-m", "memdir", command[0], str(root), *command[1:]])
    assert done.returncode in (0, 1), done.stderr[-2000:]
    if command[0] == "lint":
        assert done.stdout.count("invalid-yaml") == 2
        assert done.returncode == 1
    else:
        assert "x.md" in done.stdout and "y.md" in done.stdout


SRC = Path(__file__).resolve().parents[2] / "src" / "memdir"
CONFIG_READERS = {"config.py", "agents/_prices.py", "agents/_checklists.py", "study/_estimate.py",
                  "bench/calibration.py", "server/_tenants.py"}
"""Modules that load YAML the project ships or the user writes as settings, never a memory."""


def test_frontmatter_has_one_reader() -> None:
    # Every consumer of headers (lint, health, browse, listings, toc, the MCP server)
    # must go through the bounded loader; a stray yaml.safe_load would bypass it.
    loads = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load|compose|parse)\w*\(")
    found = {
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if loads.search(path.read_text(encoding="utf-8"))
    }
    assert found <= CONFIG_READERS, found - CONFIG_READERS
