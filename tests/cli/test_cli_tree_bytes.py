"""``memdir tree`` on a store whose file names are not UTF-8: shown, never an encoding error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.cli._common import printable

DOC = "---\nname: a\ndescription: A note.\n---\n# A\n"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "m"
    folder = os.path.join(os.fsencode(root), b"caf\xe9")
    os.makedirs(folder)
    with open(os.path.join(folder, b"a.md"), "w", encoding="utf-8") as f:
        f.write(DOC)
    return root


def _tree(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "memdir", "tree", str(store), *args],
                          capture_output=True, text=True, encoding="utf-8", env=env,
                          timeout=60, check=False)


def test_a_folder_named_in_latin_1_is_shown_with_its_byte_escaped(store: Path) -> None:
    done = _tree(store)
    assert done.returncode == 0, done.stderr
    assert "caf\\xe9/" in done.stdout
    assert "a.md" in done.stdout
    assert "1 folder(s), 1 file(s)" in done.stdout


def test_json_escapes_the_byte_so_a_reader_gets_the_same_name_back(store: Path) -> None:
    done = _tree(store, "--json")
    assert done.returncode == 0, done.stderr
    paths = [e["path"] for e in json.loads(done.stdout)["entries"]]
    assert [p.encode("utf-8", "surrogateescape") for p in paths] == [
        b"/memories/caf\xe9", b"/memories/caf\xe9/a.md"]


def test_printable_leaves_real_text_alone() -> None:
    assert printable("naïve 😀 /memories") == "naïve 😀 /memories"
    assert printable(os.fsdecode(b"x\xff\x80")) == "x\\xff\\x80"
