"""``memdir tool`` answering one ``grep`` call: the same text, without filling the text cache."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.cli._fasttool import run as run_fast
from memdir.store import Store
from memdir.tools._grep import grep_text
from memdir.tools._memory import read_set
from memdir.tools._textcache import cache_for, keeps_text, single_use


def _md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\n{body}\n"


def _grep(**arguments: object) -> str:
    return json.dumps({"name": "grep", "arguments": arguments})


@pytest.fixture
def big(store: Store) -> Store:
    """Over 20 MiB of files, against grep's batches of at most 4 MiB."""
    body = ("filler words " * 20 + "\n") * 1000  # about 260 KB a file
    for i in range(96):
        store.write(f"/memories/f{i % 4}/n{i}.md", _md(f"n{i}", body + f"word{i}"))
    return store


def _peak(call: object) -> tuple[object, int]:
    """What ``call()`` returns, and the most Python memory allocated at once during it."""
    tracemalloc.start()
    try:
        result = call()  # type: ignore[operator]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


@pytest.fixture
def warm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One call on another store first, so what the call imports is not counted as its memory."""
    other = Store(tmp_path / "other", create=True)
    other.write("/memories/a.md", _md("a", "word"))
    assert run_fast([str(other.root), _grep(pattern="word")])
    assert CliRunner().invoke(app, ["tool", str(other.root), "--set", "write",
                                    _grep(pattern="word")]).exit_code == 0
    capsys.readouterr()


def test_the_quick_one_shot_call_holds_one_batch_not_the_store(
    big: Store, warm: None, capsys: pytest.CaptureFixture[str]
) -> None:
    call = _grep(pattern="word7", max_results=5)
    answered, peak = _peak(lambda: run_fast([str(big.root), call]))
    printed = capsys.readouterr().out
    assert answered is True
    assert peak < 8 << 20, peak  # the store is over 20 MiB; a filled cache holds all of it
    assert cache_for(big).reads == 0  # no cache was filled for this root
    assert printed == grep_text(big, "word7", max_results=5) + "\n"
    assert printed.startswith("11 matching line(s) in 11 file(s) under /memories:")


def test_the_full_command_line_call_holds_one_batch_not_the_store(
    big: Store, warm: None
) -> None:
    runner = CliRunner()
    # A set that writes is answered by the full command line, not the quick start.
    args = ["tool", str(big.root), "--set", "write", _grep(pattern="WORD7", ignore_case=True)]
    result, peak = _peak(lambda: runner.invoke(app, args))
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert peak < 8 << 20, peak
    assert cache_for(big).reads == 0
    expected = grep_text(big, "WORD7", ignore_case=True) + "\n"
    assert result.stdout == expected  # type: ignore[attr-defined]


def test_single_use_reaches_the_call_and_ends_with_its_block(store: Store) -> None:
    for i in range(6):
        store.write(f"/memories/n{i}.md", _md(f"n{i}", f"word{i}"))
    tools = read_set(store)
    assert keeps_text()
    with single_use():
        assert not keeps_text()
        once = asyncio.run(tools.call("grep", {"pattern": "word[0-9]"}))  # on a worker thread
    assert keeps_text()
    assert cache_for(store).reads == 0
    kept = asyncio.run(tools.call("grep", {"pattern": "word[0-9]"}))  # as a server calls it
    assert cache_for(store).reads == 6  # this one filled the cache
    assert (once.content, once.is_error) == (kept.content, kept.is_error)
    assert once.content.startswith("6 matching line(s) in 6 file(s)")


def test_single_use_is_undone_when_its_block_raises() -> None:
    with pytest.raises(RuntimeError, match="inside"), single_use():
        raise RuntimeError("inside")
    assert keeps_text()


def test_a_one_shot_error_reads_as_before(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    store.write("/memories/a.md", _md("a", "text"))
    with pytest.raises(SystemExit) as stopped:
        run_fast([str(store.root), _grep(pattern="(unclosed")])
    assert stopped.value.code == 2
    assert "is not a valid Python regular expression" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        run_fast([str(store.root), _grep(pattern="x", path="/memories/nowhere")])
    assert "/memories/nowhere does not exist" in capsys.readouterr().out
