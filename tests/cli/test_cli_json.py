"""--json on tree, grep, view, toc and history diff: one object a script can read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.store import Store

RUN = CliRunner()


def _json(args: list[str]) -> dict[str, object]:
    result = RUN.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_tree_json_lists_every_entry_like_the_store(sample_dir: Path) -> None:
    data = _json(["tree", str(sample_dir), "--json"])
    store = Store(sample_dir)
    files = [e for e in data["entries"] if e["kind"] == "file"]
    assert sorted(f["path"] for f in files) == sorted(store.files())
    maya = next(f for f in files if f["path"] == "/memories/people/maya.md")
    assert maya["description"] == store.description("/memories/people/maya.md")
    assert data["files"] == len(files)


def test_grep_json_gives_full_lines_and_says_when_cut(sample_dir: Path) -> None:
    data = _json(["grep", str(sample_dir), "Leeds", "--json"])
    hits = data["hits"]
    assert isinstance(hits, list) and hits and data["complete"] is True
    text = Store(sample_dir).read(hits[0]["path"]).splitlines()
    assert all(text[h["line"] - 1] == h["text"] for h in hits if h["path"] == hits[0]["path"])
    cut = _json(["grep", str(sample_dir), "Leeds", "--json", "--max-results", "1"])
    assert cut["hits"] == hits[:1] and cut["complete"] is (len(hits) == 1)


def test_view_json_numbers_lines_of_a_range_a_section_and_lists_a_folder(
    sample_dir: Path,
) -> None:
    path = "/memories/people/maya.md"
    lines = Store(sample_dir).read(path).splitlines()
    ranged = _json(["view", str(sample_dir), path, "--range", "2", "3", "--json"])
    assert ranged["lines"] == [{"line": 2, "text": lines[1]}, {"line": 3, "text": lines[2]}]
    section = _json(["view", str(sample_dir), path, "--section", "Home", "--json"])
    assert section["section"] == ["Maya", "Home"]
    assert section["lines"][0]["text"] == "## Home"
    folder = _json(["view", str(sample_dir), "/memories/people", "--json"])
    assert folder["kind"] == "folder" and folder["entries"]


def test_toc_json_matches_the_sections(sample_dir: Path) -> None:
    data = _json(["toc", str(sample_dir), "/memories/people/maya.md", "--json"])
    sections = data["sections"]
    assert isinstance(sections, list)
    assert sections[0] == {"heading": ["Maya"], "level": 1, "start": 5,
                           "end": data["lines"]}


def test_history_diff_json_and_an_empty_history(sample_dir: Path) -> None:
    root = str(sample_dir)
    assert RUN.invoke(app, ["history", root, "init"]).exit_code == 0
    empty = RUN.invoke(app, ["history", root, "log"])
    assert empty.exit_code == 0 and "no snapshots yet" in empty.stderr
    assert RUN.invoke(app, ["history", root, "snapshot", "--message", "one"]).exit_code == 0
    (sample_dir / "people" / "maya.md").write_text(
        Store(sample_dir).read("/memories/people/maya.md") + "More.\n", encoding="utf-8")
    assert RUN.invoke(app, ["history", root, "snapshot", "--message", "two"]).exit_code == 0
    data = _json(["history", root, "diff", "0", "1", "--json"])
    assert data["modified"] == ["/memories/people/maya.md"] and "+More." in str(data["patch"])


def test_history_subcommand_help_needs_no_store(tmp_path: Path) -> None:
    result = RUN.invoke(app, ["history", str(tmp_path / "missing"), "log", "--help"])
    assert result.exit_code == 0 and "List every step" in result.output


@pytest.mark.parametrize(("args", "error", "hint"), [
    (["tree", "{missing}", "--json"], "no store at", "memdir init"),
    (["tree", "{store}", "/memories/nowhere", "--json"], "does not exist", "memdir tree"),
    (["grep", "{missing}", "x", "--json"], "no store at", "memdir init"),
    (["grep", "{store}", "(", "--json"], "not a valid Python regular expression", None),
    (["view", "{store}", "/memories/people/nobody.md", "--json"], "does not exist", None),
    (["view", "{store}", "/memories/people/maya.md", "--range", "90", "99", "--json"],
     "outside the file", "between 1 and"),
    (["toc", "{store}", "/memories/people/nobody.md", "--json"], "does not exist", None),
    (["lint", "{missing}", "--json"], "no store at", "memdir init"),
    (["health", "{missing}", "--json"], "No store at", None),
    (["history", "{store}", "diff", "0", "7", "--json"], "no steps yet", None),
    (["history", "{missing}", "log", "--json"], "No store at", None),
])
def test_json_errors_are_one_object_on_stdout(args: list[str], error: str, hint: str | None,
                                              sample_dir: Path, tmp_path: Path) -> None:
    root = str(sample_dir)
    if args[0] == "history":
        assert RUN.invoke(app, ["history", root, "init"]).exit_code == 0
    argv = [a.format(store=root, missing=str(tmp_path / "missing")) for a in args]
    result = RUN.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert set(data) == {"error", "hint", "exit_code"} and data["exit_code"] == 2
    assert error in data["error"] and data["error"]
    if hint is None:
        assert data["hint"] is None or isinstance(data["hint"], str)
    else:
        assert hint in data["hint"]
