"""``memdir tool --set bm25`` search in a new process over an unchanged store never loads
numpy, and prints what the full command line prints; after an edit the index decides once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.store import Store

pytestmark = pytest.mark.skipif(
    shutil.which("find") is None or not hasattr(os, "memfd_create"),
    reason="the listing needs GNU find and memfd_create")

_MAIN = (
    "import sys\nsys.argv = ['memdir', *sys.argv[1:]]\nfrom memdir.cli import main\n"
    "try:\n    main()\nfinally:\n"
    "    print('numpy:', 'numpy' in sys.modules, file=sys.stderr)\n"
)


def _memdir(*args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    env = {**clean, "MEMDIR_TOOL_TIME_LIMIT": "3600"}  # a loaded machine: answers, not timeouts
    return subprocess.run([sys.executable, "-c", _MAIN, *args], capture_output=True,
                          text=True, timeout=300, env=env, check=False)


def _numpy(done: subprocess.CompletedProcess[str]) -> bool:
    return done.stderr.strip().splitlines()[-1] == "numpy: True"


def _search(**arguments: object) -> str:
    return json.dumps({"name": "search", "arguments": arguments})


def _full(args: list[str]) -> list[str]:
    """The same call spelt so that the full command line answers it (``--set=bm25``)."""
    return [args[0], args[1], "--set=" + args[3], *args[4:]]


def _warm(folder: Path) -> None:
    """Two new processes: the first builds and saves the index, the second records its listing."""
    for _ in range(2):
        done = _memdir("tool", str(folder), "--set", "bm25", _search(query="maya"))
        assert done.returncode == 0 and _numpy(done), done.stderr
    assert (folder / ".memdir" / "bm25-listing-3.proof").is_file()


@pytest.fixture
def warm_dir(sample_dir: Path) -> Path:
    store = Store(sample_dir)
    store.write("/memories/places/tōkyō.md",
                "---\nname: tokyo\ndescription: Café crawl in Tōkyō\n---\n"
                "Größe of the café: naïve question. 東京 trip with Maya.\n")
    for name in ("b-twin", "a-twin"):  # the same words: tied scores, in path order
        store.write(f"/memories/places/{name}.md",
                    "---\nname: twin\ndescription: Twin\n---\nzebra crossing zebra\n")
    _warm(sample_dir)
    return sample_dir


@pytest.mark.parametrize(("arguments", "status"), [
    ({"query": "maya bristol job"}, 0),
    ({"query": "maya maya bristol", "k": 2}, 0),  # a repeated word
    ({"query": "maya", "k": 1, "path": "/memories/people"}, 0),
    ({"query": "café größe 東京 tōkyō"}, 0),
    ({"query": "zebra", "k": 1}, 0),  # two tied files, k of one: the first path wins
    ({"query": "zzzunseenword maya"}, 0),
    ({"query": "zzzunseenword"}, 0),  # no hit
    ({"query": "?? !"}, 2),  # no searchable word
    ({"query": "maya", "k": 0}, 2),
    ({"query": "maya", "path": "/memories/nowhere"}, 2),
])
def test_an_unchanged_store_is_searched_without_numpy_as_the_app_searches_it(
        warm_dir: Path, arguments: dict[str, object], status: int) -> None:
    args = ["tool", str(warm_dir), "--set", "bm25", _search(**arguments)]
    light = _memdir(*args)
    assert light.returncode == status, light.stderr
    assert not _numpy(light)
    full = _memdir(*_full(args))
    assert _numpy(full)
    assert (light.stdout, light.returncode) == (full.stdout, full.returncode)
    assert light.stdout.strip()


def test_an_edit_in_place_after_the_record_is_seen_by_the_next_process(warm_dir: Path) -> None:
    args = ["tool", str(warm_dir), "--set", "bm25", _search(query="zora")]
    before = _memdir(*args)
    assert before.returncode == 0 and not _numpy(before)
    # An edit that keeps size and modification time: only the change time moves.
    target = next(p for p in sorted(warm_dir.rglob("*.md")) if b"Maya" in p.read_bytes())
    st = target.stat()
    target.write_bytes(target.read_bytes().replace(b"Maya", b"Zora", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    virtual = "/memories/" + target.relative_to(warm_dir).as_posix()
    seen = _memdir(*args)
    assert seen.returncode == 0 and _numpy(seen)  # the listing differs: the index decides
    assert f"1. {virtual} (score" in seen.stdout and seen.stdout != before.stdout
    again = _memdir(*args)  # the record now names that file: read again, without numpy
    assert again.stdout == seen.stdout and not _numpy(again)
    assert _memdir(*_full(args)).stdout == seen.stdout
