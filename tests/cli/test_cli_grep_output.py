"""``memdir grep`` prints as GNU grep does: quietly gone on a closed pipe, never a traceback.

Both ways the command is answered run in real processes: the quick start (a
plain call) and the full command line (``--path=X`` is a spelling only typer
reads). GNU grep on the same folder is the reference for the closed pipe.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.sample import build_sample_store

SPELLINGS = {"quick start": ["--path", "/memories"], "full command line": ["--path=/memories"]}
"""The same search, answered by each path."""


@pytest.fixture
def cafe_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    build_sample_store(root)
    lines = "".join(f"café {i} {'x' * 80}\n" for i in range(3_000))
    (root / "cafe.md").write_text(f"---\nname: cafe\ndescription: café notes 😀\n---\n{lines}")
    return root


def _env(**extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    return {**clean, **extra}


def _closed_reader(command: list[str]) -> tuple[int, str]:
    """Run ``command`` with its output a pipe closed before it writes; status and stderr."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env())
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the search is done, as `| head -1` gets
    err = proc.stderr.read().decode()
    return proc.wait(timeout=60), err


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_closed_pipe_ends_grep_as_it_ends_gnu_grep(cafe_store: Path, spelling: str) -> None:
    gnu = shutil.which("grep")
    if gnu is None:
        pytest.skip("GNU grep is not installed")
    status, err = _closed_reader([gnu, "-rn", "caf", str(cafe_store)])
    assert status == -signal.SIGPIPE
    assert err == ""
    command = [sys.executable, "-m", "memdir", "grep", str(cafe_store), "caf",
               "--max-results", "1000", *SPELLINGS[spelling]]
    status, err = _closed_reader(command)
    assert (status, err) == (-signal.SIGPIPE, "")


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_ascii_stream_gets_escapes_not_a_traceback(cafe_store: Path, spelling: str) -> None:
    outputs = []
    for as_json in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "memdir", "grep", str(cafe_store), "notes|café 7 ", *as_json,
             *SPELLINGS[spelling]],
            capture_output=True, env=_env(PYTHONIOENCODING="ascii"), timeout=60, check=False)
        assert done.returncode == 0, done.stderr.decode()
        assert done.stderr == b""
        outputs.append(done.stdout.decode("ascii"))  # nothing but ASCII was written
    text, as_json = outputs
    assert "/memories/cafe.md:3: description: caf\\xe9 notes \\U0001f600" in text
    hits = json.loads(as_json)["hits"]  # JSON's own escapes: the document stays valid
    assert hits[0]["text"] == "description: café notes 😀"
    assert "\\u00e9" in as_json and "\\ud83d\\ude00" in as_json


def test_both_paths_print_the_same_under_ascii(cafe_store: Path) -> None:
    printed = set()
    for spelling in SPELLINGS.values():
        done = subprocess.run(
            [sys.executable, "-m", "memdir", "grep", str(cafe_store), "café 1\\d\\d ", *spelling],
            capture_output=True, env=_env(PYTHONIOENCODING="ascii"), timeout=60, check=True)
        printed.add(done.stdout)
    assert len(printed) == 1


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_terminal_escapes_are_stripped_from_piped_output(cafe_store: Path, spelling: str) -> None:
    (cafe_store / "red.md").write_text("---\nname: red\ndescription: d\n---\n"
                                       "a \x1b[31mred\x1b[0m word\n")
    command = [sys.executable, "-m", "memdir", "grep", str(cafe_store), "a .*red.* word",
               *SPELLINGS[spelling]]
    done = subprocess.run(command, capture_output=True, env=_env(), timeout=60, check=True)
    assert b"/memories/red.md:5: a red word" in done.stdout
    assert b"\x1b" not in done.stdout
