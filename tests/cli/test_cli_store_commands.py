"""init, tree, view, grep, toc and lint, run through the real typer app on real stores."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.cli import app
from memdir.store import Store


def test_init_creates_an_empty_store(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "new" / "store"
    result = runner.invoke(app, ["init", str(target)])
    assert result.exit_code == 0, result.output
    assert (target / ".memdir").is_dir()
    assert Store(target).files() == []


def test_init_is_idempotent_on_an_existing_store(runner: CliRunner, sample_dir: Path) -> None:
    before = Store(sample_dir).files()
    result = runner.invoke(app, ["init", str(sample_dir)])
    assert result.exit_code == 0
    assert "already a store" in result.output
    assert Store(sample_dir).files() == before


def test_init_refuses_a_foreign_folder_unless_forced(runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("not memory")
    refused = runner.invoke(app, ["init", str(folder)])
    assert refused.exit_code == 2
    assert "--force" in refused.stderr
    assert not (folder / ".memdir").exists()
    forced = runner.invoke(app, ["init", str(folder), "--force"])
    assert forced.exit_code == 0
    assert (folder / ".memdir").is_dir()
    assert (folder / "notes.txt").read_text() == "not memory"


def test_init_refuses_a_file(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "a-file"
    path.write_text("x")
    result = runner.invoke(app, ["init", str(path)])
    assert result.exit_code == 2
    assert "is a file" in result.stderr


def test_init_sample_fills_a_new_store(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "demo"
    result = runner.invoke(app, ["init", str(target), "--sample"])
    assert result.exit_code == 0, result.output
    assert "/memories/people/maya.md" in Store(target).files()


def test_init_sample_refuses_a_non_empty_store(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["init", str(sample_dir), "--sample"])
    assert result.exit_code == 2
    assert "empty folder" in result.stderr


def test_tree_shows_every_file_with_its_description(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["tree", str(sample_dir)])
    assert result.exit_code == 0, result.output
    store = Store(sample_dir)
    for entry in store.walk():
        name = entry.path.rsplit("/", 1)[-1]
        assert name in result.stdout
        if entry.description:
            # Never cropped, however long the line.
            assert entry.description in result.stdout
    assert "5 folder(s), 6 file(s)" in result.stdout


def test_tree_of_a_subfolder_with_depth(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["tree", str(sample_dir), "/memories/events", "--depth", "1"])
    assert result.exit_code == 0
    assert "2025/" in result.stdout
    assert "ada-wedding.md" not in result.stdout
    assert "maya.md" not in result.stdout


def test_tree_of_a_missing_folder_says_what_to_do(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["tree", str(sample_dir), "/memories/nowhere"])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr
    assert "memdir tree" in result.stderr


def test_commands_on_a_missing_store_point_to_init(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    for argv in (["tree", str(missing)], ["view", str(missing)], ["lint", str(missing)],
                 ["grep", str(missing), "x"], ["toc", str(missing), "/memories/a.md"]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 2, argv
        assert "memdir init" in result.stderr, argv
        assert not missing.exists()


def test_view_numbers_lines_like_the_tool(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["view", str(sample_dir), "/memories/people/maya.md"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split("\t") == ["     1", "---"]
    assert lines[1].endswith("\tname: maya")


def test_view_range_and_section(runner: CliRunner, sample_dir: Path) -> None:
    ranged = runner.invoke(app, ["view", str(sample_dir), "/memories/people/maya.md",
                                 "--range", "5", "7"])
    assert ranged.exit_code == 0
    numbers = [ln.split("\t")[0].strip() for ln in ranged.stdout.splitlines()]
    assert numbers == ["5", "6", "7"]
    section = runner.invoke(app, ["view", str(sample_dir), "/memories/people/maya.md",
                                  "--section", "Work > Past"])
    assert section.exit_code == 0, section.output
    assert "St Aldhelm's" in section.stdout
    assert "Severn Vale" not in section.stdout


def test_view_errors(runner: CliRunner, sample_dir: Path) -> None:
    missing = runner.invoke(app, ["view", str(sample_dir), "/memories/people/zoe.md"])
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr
    both = runner.invoke(app, ["view", str(sample_dir), "/memories/people/maya.md",
                               "--range", "1", "2", "--section", "Work"])
    assert both.exit_code == 2
    no_section = runner.invoke(app, ["view", str(sample_dir), "/memories/people/maya.md",
                                     "--section", "Hobbies"])
    assert no_section.exit_code == 2
    escape = runner.invoke(app, ["view", str(sample_dir), "/memories/../../etc/passwd"])
    assert escape.exit_code == 2


def test_view_of_a_folder_lists_descriptions(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["view", str(sample_dir), "/memories/people"])
    assert result.exit_code == 0
    assert "maya.md" in result.stdout
    assert "nurse educator in Bristol" in result.stdout


def test_grep_finds_lines_and_caps_results(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["grep", str(sample_dir), "biscuit", "-i"])
    assert result.exit_code == 0
    assert "/memories/people/maya.md:" in result.stdout
    assert "ginger rescue cat" in result.stdout
    capped = runner.invoke(app, ["grep", str(sample_dir), "Maya", "--max-results", "2"])
    assert capped.exit_code == 0
    hits = [ln for ln in capped.stdout.splitlines() if ln.startswith("/memories/")]
    assert len(hits) == 2
    assert "max_results" in capped.stdout
    scoped = runner.invoke(app, ["grep", str(sample_dir), "Maya", "--path", "/memories/plans"])
    hits = [ln for ln in scoped.stdout.splitlines() if ln.startswith("/memories/")]
    assert hits and all(h.startswith("/memories/plans/") for h in hits)


def test_grep_with_a_bad_pattern_is_a_usage_error(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["grep", str(sample_dir), "(unclosed"])
    assert result.exit_code == 2
    assert "regular expression" in result.stderr


def test_toc_outlines_a_file(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["toc", str(sample_dir), "/memories/people/theo.md"])
    assert result.exit_code == 0
    for heading in ("# Theo", "## Work", "### Past", "## Pottery"):
        assert heading in result.stdout
    missing = runner.invoke(app, ["toc", str(sample_dir), "/memories/people/zoe.md"])
    assert missing.exit_code == 2


def test_lint_clean_store_exits_zero(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["lint", str(sample_dir)])
    assert result.exit_code == 0
    assert "clean" in result.stdout


def _break(store_dir: Path) -> None:
    (store_dir / "people" / "zoe.md").write_text("# Zoe\n\nsee /memories/people/nobody.md\n")
    (store_dir / "stray.txt").write_text("x")


def test_lint_reports_every_defect_and_exits_one(runner: CliRunner, sample_dir: Path) -> None:
    _break(sample_dir)
    result = runner.invoke(app, ["lint", str(sample_dir), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    codes = {(f["path"], f["code"]) for f in payload["findings"]}
    assert codes == {
        ("/memories/people/zoe.md", "missing-frontmatter"),
        ("/memories/people/zoe.md", "dangling-reference"),
        ("/memories/stray.txt", "not-markdown"),
    }
    assert payload["clean"] is False
    assert payload["fixed"] == []


def test_lint_fix_repairs_what_it_can_and_reports_the_rest(
    runner: CliRunner, sample_dir: Path
) -> None:
    _break(sample_dir)
    result = runner.invoke(app, ["lint", str(sample_dir), "--fix", "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert [(f["path"], f["code"]) for f in payload["fixed"]] == [
        ("/memories/people/zoe.md", "missing-frontmatter")
    ]
    assert {f["code"] for f in payload["findings"]} == {"dangling-reference", "not-markdown"}
    assert (sample_dir / "people" / "zoe.md").read_text().startswith("---\nname: zoe\n")
    text = runner.invoke(app, ["lint", str(sample_dir)])
    assert text.exit_code == 1
    assert "2 defect(s)" in text.stdout


def test_lint_skills_requires_skill_metadata(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["lint", str(sample_dir), "--skills", "--json"])
    assert result.exit_code == 1
    paths = {f["path"] for f in json.loads(result.stdout)["findings"]}
    assert "/memories/people/maya.md" in paths


def test_every_command_has_a_help_page(runner: CliRunner) -> None:
    for name in ("init", "tree", "view", "grep", "toc", "lint", "tool", "serve", "demo"):
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, name
        assert "Exit status" in result.stdout, name


def test_tree_with_depth_counts_the_whole_tree_and_marks_what_it_cut(
        runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["tree", str(sample_dir), "--depth", "1"])
    assert result.exit_code == 0, result.output
    assert "5 folder(s), 6 file(s); drawn to depth 1: 4 folder(s), 0 file(s)" in result.stdout
    assert "people/  2 file(s) below" in result.stdout
    data = json.loads(runner.invoke(app, ["tree", str(sample_dir), "-d", "1", "--json"]).stdout)
    assert (data["folders"], data["files"], data["depth"]) == (5, 6, 1)
    people = next(e for e in data["entries"] if e["path"] == "/memories/people")
    assert people["files_below"] == 2
