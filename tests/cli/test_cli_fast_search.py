"""``memdir tool --set bm25`` in a new process: a search builds its own tool alone, the
store is listed beside the imports, and the answer is the full command line's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app

# The real entry point; then, on stderr, which of some modules were loaded, how many
# listings were started, how many times the index walked the files itself, and whether
# numpy was loaded (the index holds its postings in numpy arrays; a search answered from
# the saved index as it is, memdir.tools._bm25light, never loads it). The walk is counted
# where the index takes it from, before the index is imported, if it ever is.
_MAIN = """
import sys
sys.argv = ['memdir', *sys.argv[1:]]
import memdir.store._tree as tree
walks = []
original = tree.memory_files
def counted(*args, **kwargs):
    walks.append(1)
    return original(*args, **kwargs)
tree.memory_files = counted
import memdir.tools._bm25walk as walk
starts = []
original_start = walk.start
def start(*args, **kwargs):
    starts.append(1)
    return original_start(*args, **kwargs)
walk.start = start
from memdir.cli import main
try:
    main()
finally:
    shown = ('typer', 'memdir.tools._grep', 'memdir.tools._memory')
    print('loaded:', *sorted(m for m in shown if m in sys.modules), file=sys.stderr)
    print('listings:', len(starts), file=sys.stderr)
    print('walks:', len(walks), file=sys.stderr)
    print('numpy:', 'numpy' in sys.modules, file=sys.stderr)
"""


def _memdir(*args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    return subprocess.run([sys.executable, "-c", _MAIN, *args], capture_output=True,
                          text=True, timeout=120, env=clean, check=False)


def _report(done: subprocess.CompletedProcess[str]) -> tuple[str, int, int]:
    """What was loaded, how many listings were started, how many walks the index made."""
    loaded, listings, walks, _ = done.stderr.strip().splitlines()[-4:]
    return loaded, int(listings.removeprefix("listings: ")), int(walks.removeprefix("walks: "))


def _numpy(done: subprocess.CompletedProcess[str]) -> bool:
    """Whether the process loaded numpy (it did not when the saved index answered as it is)."""
    return done.stderr.strip().splitlines()[-1] == "numpy: True"


def _search(**arguments: object) -> str:
    return json.dumps({"name": "search", "arguments": arguments})


@pytest.mark.parametrize(("call", "status"), [
    (_search(query="maya bristol job"), 0),
    (_search(query="maya", k=2, path="/memories"), 0),
    (_search(query="maya", k=0), 2),
    (_search(query="maya", path="/memories/nowhere"), 2),
    (_search(query="?! a"), 2),  # no searchable words
    (_search(), 2),
    (json.dumps({"name": "view", "arguments": {"path": "/memories"}}), 0),
    (json.dumps({"name": "nosuch"}), 2),
])
def test_a_bm25_call_prints_what_the_app_prints(
    runner: CliRunner, sample_dir: Path, call: str, status: int
) -> None:
    args = ["tool", str(sample_dir), "--set", "bm25", call]
    fast = _memdir(*args)
    assert fast.returncode == status, fast.stderr
    loaded, listings, _ = _report(fast)
    through_app = runner.invoke(app, args)
    assert through_app.exit_code == status, through_app.output
    assert fast.stdout == through_app.stdout and fast.stdout.strip()
    if json.loads(call)["name"] == "search":
        assert loaded == "loaded:"  # neither typer nor the read tools (grep's engine)
        assert listings == 1
    else:
        assert "typer" not in loaded and listings == 0  # no search, no listing


@pytest.mark.skipif(shutil.which("find") is None or not hasattr(os, "memfd_create"),
                    reason="the listing needs GNU find and memfd_create")
def test_a_new_process_finds_the_saved_index_by_the_listing_and_still_sees_edits(
        sample_dir: Path) -> None:
    args = ["tool", str(sample_dir), "--set", "bm25"]
    first = _memdir(*args, _search(query="maya bristol"))
    assert first.returncode == 0 and _report(first)[2] == 1  # built and saved
    again = _memdir(*args, _search(query="maya bristol"))
    assert again.stdout == first.stdout and _report(again)[2] == 0  # the listing sufficed
    assert _numpy(again)  # that listing was paired with the saved index, and recorded
    light = _memdir(*args, _search(query="maya bristol"))
    assert light.stdout == first.stdout and _report(light)[2] == 0  # the record sufficed
    assert not _numpy(light)  # answered from the saved index as it is
    # An edit in place that keeps size and modification time: only the change time moves.
    target = next(p for p in sorted(sample_dir.rglob("*.md")) if b"Maya" in p.read_bytes())
    st = target.stat()
    data = target.read_bytes()
    target.write_bytes(data.replace(b"Maya", b"Zora", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    edited = _memdir(*args, _search(query="zora"))
    assert edited.returncode == 0, edited.stderr
    assert _report(edited)[2] == 1  # the listing differed; the index walked and read it
    assert _numpy(edited)  # not the record's listing: the index answered
    virtual = "/memories/" + target.relative_to(sample_dir).as_posix()
    assert f"1. {virtual} (score" in edited.stdout
    later = _memdir(*args, _search(query="zora"))  # the record names the edited file
    assert later.stdout == edited.stdout and _report(later)[2] == 0 and not _numpy(later)


@pytest.mark.skipif(shutil.which("find") is None or not hasattr(os, "memfd_create"),
                    reason="the listing needs GNU find and memfd_create")
def test_after_an_edit_only_the_first_new_process_walks_the_store(sample_dir: Path) -> None:
    # The edit is too small to compact the saved index. The process that notices it
    # walks and records which files differ; the processes after it read those again.
    args = ["tool", str(sample_dir), "--set", "bm25"]
    assert _memdir(*args, _search(query="maya bristol")).returncode == 0  # built and saved
    target = next(p for p in sorted(sample_dir.rglob("*.md")) if b"Maya" in p.read_bytes())
    st = target.stat()
    target.write_bytes(target.read_bytes().replace(b"Maya", b"Zora", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    virtual = "/memories/" + target.relative_to(sample_dir).as_posix()
    noticed = _memdir(*args, _search(query="zora"))
    assert noticed.returncode == 0 and _report(noticed)[2] == 1
    assert f"1. {virtual} (score" in noticed.stdout
    for _ in range(2):
        later = _memdir(*args, _search(query="zora"))
        assert later.stdout == noticed.stdout and _report(later)[2] == 0


@pytest.mark.skipif(shutil.which("find") is None or not hasattr(os, "memfd_create"),
                    reason="the listing needs GNU find and memfd_create")
def test_processes_started_at_once_after_an_edit_all_see_it(sample_dir: Path) -> None:
    args = ["tool", str(sample_dir), "--set", "bm25"]
    assert _memdir(*args, _search(query="maya bristol")).returncode == 0
    target = next(p for p in sorted(sample_dir.rglob("*.md")) if b"Maya" in p.read_bytes())
    st = target.stat()
    target.write_bytes(target.read_bytes().replace(b"Maya", b"Zora", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    running = [subprocess.Popen([sys.executable, "-c", _MAIN, *args, _search(query="zora")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=clean) for _ in range(4)]
    answers = [process.communicate(timeout=120)[0] for process in running]
    assert all(process.returncode == 0 for process in running)
    virtual = "/memories/" + target.relative_to(sample_dir).as_posix()
    assert len(set(answers)) == 1 and f"1. {virtual} (score" in answers[0]
    after = _memdir(*args, _search(query="zora"))  # whichever record was left holds
    assert after.stdout == answers[0] and _report(after)[2] == 0
