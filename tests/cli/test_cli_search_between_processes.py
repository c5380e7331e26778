"""Files changed between two ``memdir tool`` searches are seen by the second process, which
answers through the light search path (no pydantic) exactly as a fresh index does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app

_MAIN = (
    "import sys\nsys.argv = ['memdir', *sys.argv[1:]]\nfrom memdir.cli import main\n"
    "try:\n    main()\nfinally:\n"
    "    print('pydantic' in sys.modules, 'asyncio' in sys.modules, file=sys.stderr)\n"
)


def _search(folder: Path, query: str) -> tuple[str, str]:
    """A new process's answer to a search of ``folder``, and whether it loaded the heavy parts."""
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    clean["MEMDIR_TOOL_TIME_LIMIT"] = "3600"  # a plain value: still the light path
    call = json.dumps({"name": "search", "arguments": {"query": query, "k": 5}})
    done = subprocess.run([sys.executable, "-c", _MAIN, "tool", str(folder), "--set", "bm25",
                           call], capture_output=True, text=True, timeout=120, env=clean,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.strip().splitlines()[-1]


def _fresh(runner: CliRunner, folder: Path, query: str, tmp_path: Path) -> str:
    """The full command line's answer on a copy of ``folder`` without its saved index."""
    copy = tmp_path / "fresh"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy, symlinks=True, ignore=shutil.ignore_patterns(".memdir"))
    call = json.dumps({"name": "search", "arguments": {"query": query, "k": 5}})
    done = runner.invoke(app, ["tool", str(copy), "--set", "bm25", call],
                         env={"MEMDIR_TOOL_TIME_LIMIT": "3600"})
    assert done.exit_code == 0, done.output
    return done.stdout.replace(str(copy), str(folder))


def _with_maya(folder: Path) -> Path:
    return next(p for p in sorted(folder.rglob("*.md")) if b"Maya" in p.read_bytes())


def _same_size_same_time(folder: Path) -> None:
    target = _with_maya(folder)
    st = target.stat()
    target.write_bytes(target.read_bytes().replace(b"Maya", b"Zora", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # only the change time moves


def _grown(folder: Path) -> None:
    target = _with_maya(folder)
    target.write_text(target.read_text(encoding="utf-8") + "\nZora met Maya in Bristol.\n",
                      encoding="utf-8")


def _added(folder: Path) -> None:
    (folder / "zora.md").write_text("---\ndescription: Zora\n---\nZora lives in Bristol.\n",
                                    encoding="utf-8")


def _removed(folder: Path) -> None:
    _with_maya(folder).unlink()
    _added(folder)


@pytest.mark.parametrize("edit", [_same_size_same_time, _grown, _added, _removed])
def test_an_edit_between_processes_is_searched_as_a_fresh_index_searches(
        runner: CliRunner, sample_dir: Path, tmp_path: Path,
        edit: Callable[[Path], None]) -> None:
    first, loaded = _search(sample_dir, "maya zora bristol")  # builds and saves the index
    assert loaded == "False False"  # the light path: no pydantic, no asyncio
    assert first == _fresh(runner, sample_dir, "maya zora bristol", tmp_path)
    edit(sample_dir)
    second, loaded = _search(sample_dir, "maya zora bristol")
    assert loaded == "False False"
    assert second != first  # the edit changed the answer...
    assert second == _fresh(runner, sample_dir, "maya zora bristol", tmp_path)  # ...exactly
    # A second small edit, after a process that did not compact the index.
    _grown(sample_dir) if edit is not _grown else _added(sample_dir)
    third, _ = _search(sample_dir, "maya zora bristol")
    assert third == _fresh(runner, sample_dir, "maya zora bristol", tmp_path)
    assert third != second
