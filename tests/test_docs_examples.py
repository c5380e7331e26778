"""Every example in README.md and docs/*.md runs as written.

Python blocks run as scripts (``python example.py``) in a fresh interpreter from
the repository root, with no ``MEMDIR_*`` variable set except ``MEMDIR_DATA_DIR``
for the examples that read benchmark data (``../shared/data``; they skip where
it is absent). Shell blocks (``sh``, ``bash``, ``console``) run line by line in a
fresh temporary folder; a leading ``uv run memdir`` or ``memdir`` runs this
checkout's command line (``python -m memdir``), which is what both mean after
the README's set-up. A block that cannot run here (it downloads data, starts a
server that waits for clients, or shows a synopsis with placeholders) says so
on the line above its fence, as ``<!-- not run: REASON -->``; a shell line that
needs a model API key is left out the same way (it names a provider's model in
``MEMDIR_MODEL`` or ``--model``).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<before>[^\n]*)\n```(?P<lang>\w+)\n(?P<body>[\s\S]*?)^```$", re.M)
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>.+?) -->\s*$")
SHELL = {"sh", "bash", "console"}
NEEDS_DATA = ("MEMDIR_DATA_DIR", "shared/data", "get_settings().data_dir", "configs/")
"""An example naming one of these reads the benchmark data (a shipped config reads it too)."""
NEEDS_KEY = re.compile(r"(\bMEMDIR_MODEL=|--model[ =])(?!memdir/|mockllm/)\S+")
TIMEOUT = 300


@dataclass(frozen=True)
class Example:
    doc: Path
    line: int
    lang: str
    body: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def _examples() -> list[Example]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            lang = match["lang"]
            if lang != "python" and lang not in SHELL:
                continue
            before = match["before"].rsplit("\n", 1)[-1]
            marked = NOT_RUN.search(before)
            line = text.count("\n", 0, match.start("lang")) + 1
            found.append(Example(doc, line, lang, match["body"],
                                 marked["reason"] if marked else None))
    return found


EXAMPLES = _examples()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    if DATA.is_dir():
        env["MEMDIR_DATA_DIR"] = str(DATA)
    return env


def _commands(example: Example) -> list[str]:
    """The shell lines of a block: ``$ `` lines of a console block, every line of a script."""
    lines = example.body.splitlines()
    if example.lang == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line.strip()
        elif line.strip() and not line.lstrip().startswith("#"):
            joined.append(line.strip())
    return joined


def _as_this_checkout(command: str) -> str:
    words = shlex.split(command, comments=True)
    env = []
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        env.append(words.pop(0))
    if words[:3] == ["uv", "run", "memdir"]:
        words = words[3:]
    elif words[:1] == ["memdir"]:
        words = words[1:]
    else:
        raise AssertionError(f"not a memdir command (mark the block not run): {command}")
    return shlex.join([*env, sys.executable, "-m", "memdir", *words])


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_the_example_runs_as_written(example: Example, tmp_path: Path) -> None:
    if example.skip is not None:
        assert len(example.skip) > 10, f"{example.id}: say why the block is not run"
        pytest.skip(f"not run: {example.skip}")
    if any(needle in example.body for needle in NEEDS_DATA) and not DATA.is_dir():
        pytest.skip("the benchmark data (../shared/data) is not on this machine")
    env = _env()
    if example.lang == "python":
        script = tmp_path / "example.py"
        script.write_text(example.body, encoding="utf-8")
        done = subprocess.run([sys.executable, str(script)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)
        assert done.returncode == 0, f"{example.id}:\n{done.stdout}\n{done.stderr}"
        return
    (tmp_path / "configs").symlink_to(REPO / "configs")  # as in the repository's root
    ran, keyed = 0, []
    for command in _commands(example):
        if NEEDS_KEY.search(command):
            keyed.append(command)
            continue
        done = subprocess.run(_as_this_checkout(command), shell=True, cwd=tmp_path,  # noqa: S602
                              env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=TIMEOUT, check=False)
        assert done.returncode == 0, f"{example.id}: {command}\n{done.stdout}\n{done.stderr}"
        ran += 1
    if not ran and keyed:
        pytest.skip(f"every line needs a model API key: {keyed[0]}")
    assert ran, f"{example.id}: no command ran"


def test_the_harness_finds_the_examples() -> None:
    ids = {e.id.split(":")[0] for e in EXAMPLES}
    assert {"README.md", "docs/cli.md", "docs/agents.md", "docs/metrics.md"} <= ids, ids
    library = [e for e in EXAMPLES
               if e.lang == "python" and e.doc.name in {"agents.md", "metrics.md"}]
    assert len(library) >= 3 and all(e.skip is None for e in library)


def test_a_line_that_needs_a_provider_is_recognised() -> None:
    assert NEEDS_KEY.search("memdir judge calibrate --model openai/gpt-5.4-mini")
    assert NEEDS_KEY.search("MEMDIR_MODEL=anthropic/claude memdir ask ./m 'q'")
    assert not NEEDS_KEY.search("memdir ask ./m 'q' --model memdir/grep-reader")


def test_a_memdir_line_becomes_this_checkout() -> None:
    line = _as_this_checkout("MEMDIR_X=1 uv run memdir tree ./m   # a comment")
    assert line == shlex.join(["MEMDIR_X=1", sys.executable, "-m", "memdir", "tree", "./m"])
