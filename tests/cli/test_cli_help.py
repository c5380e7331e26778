"""Every subcommand is found, loads only when used, and its --help renders."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from memdir.cli import app

ROOT = typer.main.get_command(app)
assert isinstance(ROOT, TyperGroup)
COMMANDS = ROOT.list_commands(typer.Context(ROOT))
HEAVY = ("inspect_ai", "bm25s", "numpy", "scipy", "matplotlib", "sklearn", "markdown_it", "mcp")


def _loaded_after(code: str) -> set[str]:
    """Top-level packages a fresh interpreter has loaded after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)
    return set(done.stdout.split())


def test_every_subcommand_is_listed() -> None:
    expected = {"init", "tree", "view", "grep", "toc", "lint", "tool", "serve", "demo",
                "ask", "ingest", "health", "history", "study", "skills"}
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_renders_and_the_summary_comes_from_the_module(name: str) -> None:
    result = CliRunner().invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert "<bool>" not in result.output
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    line = next(row for row in listing.splitlines() if row.strip().startswith(name + " "))
    assert len(line.split(None, 1)[1]) > 10, line


def test_a_group_subcommand_help_needs_no_store() -> None:
    for argv in (["history", "log", "--help"], ["study", "run", "--help"]):
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 0, result.output


def test_a_mistyped_command_suggests_the_real_one() -> None:
    result = CliRunner().invoke(app, ["grp"])
    assert result.exit_code == 2
    assert "No such command 'grp'" in result.output and "'grep'" in result.output


def test_version_prints_the_installed_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"memdir {version('memdir')}"


def test_top_level_help_loads_no_command_module() -> None:
    loaded = _loaded_after(
        "import sys\nsys.argv = ['memdir', '--help']\nfrom memdir.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert not loaded & {*HEAVY, "pydantic", "rich", "yaml"}, loaded


def test_importing_the_tools_loads_no_ranked_index() -> None:
    assert not _loaded_after("import memdir.tools") & set(HEAVY)
    assert not _loaded_after("from memdir.tools import read_set, make_toolset") & set(HEAVY)
    # The ranked sets' numerical libraries load when a set is built, not when it is named.
    assert not _loaded_after("from memdir.tools import bm25_set") & set(HEAVY)
    built = ("import tempfile\nfrom memdir.store import Store\nfrom memdir.tools import bm25_set\n"
             "bm25_set(Store(tempfile.mkdtemp(), create=True))")
    loaded = _loaded_after(built)
    # numpy loads with the set; bm25s (and the scipy it imports) does not even then: its
    # stopword list is read from its file, and scoring is memdir's own.
    assert "numpy" in loaded and "bm25s" not in loaded


def test_a_grep_loads_neither_agents_nor_the_ranked_index(sample_dir: object) -> None:
    loaded = _loaded_after(
        "import sys\n"
        f"sys.argv = ['memdir', 'grep', {str(sample_dir)!r}, 'Maya']\n"
        "from memdir.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert not loaded & {*HEAVY, "rich"}, loaded
    # Nor an event loop or the write lock's module: a search neither awaits nor locks.
    assert not loaded & {"asyncio", "filelock"}, loaded


def _leaf_commands() -> list[tuple[str, typer.core.TyperCommand]]:
    found = []
    ctx = typer.Context(ROOT)
    pending: list[tuple[str, object]] = [
        (name, ROOT.resolve_command(ctx, [name])[1]) for name in COMMANDS
    ]
    while pending:
        name, command = pending.pop()
        if isinstance(command, TyperGroup):
            sub = typer.Context(command)
            pending += [(f"{name} {n}", command.get_command(sub, n))
                        for n in command.list_commands(sub)]
        elif isinstance(command, typer.core.TyperCommand):
            found.append((name, command))
    return sorted(found, key=lambda item: item[0])


def test_each_short_flag_means_one_thing_everywhere() -> None:
    meaning: dict[str, set[str]] = {}
    for _name, command in _leaf_commands():
        for param in command.params:
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in param.opts if len(o) == 2 and o.startswith("-")):
                meaning.setdefault(short, set()).update(longs)
    clashes = {short: longs for short, longs in meaning.items() if len(longs) > 1}
    assert not clashes, clashes


def test_store_is_the_first_argument_of_every_store_command() -> None:
    for name, command in _leaf_commands():
        names = [p.name for p in command.params if p.param_type_name == "argument"]
        if "store_path" in names:
            assert names[0] == "store_path", f"{name}: {names}"


def _complete(words: str, tmp_path: object) -> list[str]:
    """What bash completion offers after ``memdir WORDS`` (the last word being typed)."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    typed = words.split()
    cword = len(typed) + (1 if words.endswith(" ") else 0)
    env |= {"COMP_WORDS": f"memdir {words}", "COMP_CWORD": str(cword),
            "_MEMDIR_COMPLETE": "complete_bash"}
    script = Path(sys.executable).parent / "memdir"  # the installed command: completion keys on it
    done = subprocess.run([str(script)], env=env, capture_output=True,
                          text=True, timeout=60, check=False, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_completion_offers_a_commands_options_and_subcommands(tmp_path: object) -> None:
    assert _complete("tre", tmp_path) == ["tree"]
    assert {"--depth", "--json", "--help"} <= set(_complete("tree ./m --", tmp_path))
    assert _complete("tree ./m --de", tmp_path) == ["--depth"]
    assert {"run", "report", "inspect", "rejudge"} <= set(_complete("study ", tmp_path))
    assert {"init", "snapshot", "log", "show", "diff"} <= set(_complete("history ./m ", tmp_path))
    assert "--path" in _complete("history ./m show -", tmp_path)


def test_usage_lines_name_arguments_as_a_shell_reader_expects() -> None:
    for argv in (["tree", "--help"], ["history", "./m", "show", "--help"], ["grep"]):
        shown = CliRunner().invoke(app, argv).output
        usage = next(line for line in shown.splitlines() if line.startswith("Usage:"))
        assert "{" not in usage and "}" not in usage, usage
    shown = CliRunner().invoke(app, ["tree", "--help"]).output
    assert "memdir tree [OPTIONS] STORE [PATH]" in shown
    shown = CliRunner().invoke(app, ["history", "./m", "show", "--help"]).output
    assert "memdir history STORE show [OPTIONS] STEP" in shown
