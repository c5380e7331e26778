"""``memdir tree`` written without rich when stdout is no terminal: rich's text, byte for byte."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from memdir.cli import app
from memdir.cli.tree import plain_console, tree_lines, tree_text
from memdir.store import Entry, Store

DOC = "---\nname: {name}\ndescription: {desc}\n---\nBody.\n"

_TEXT = st.lists(
    st.sampled_from(list("ab :[]/\\#\t\r\n\x07\x08\x0b\x0c\x1b=@é😀") + [
        ":smile:", ":thumbs_up:", "[bold]", "[/]", "[/bold]", "\\[", ":a:[b]:", "[link=x]",
        ":red_heart-emoji:", "\u2028"]),
    min_size=1, max_size=12).map("".join)


@st.composite
def _trees(draw: st.DrawFn) -> list[Entry]:
    """Entries in tree order (a folder's entries right after it), with hostile text."""
    entries: list[Entry] = []
    stack = ["/memories"]
    for _ in range(draw(st.integers(0, 14))):
        depth = draw(st.integers(1, len(stack)))
        del stack[depth:]
        name = draw(_TEXT).replace("/", "_")
        path = f"{stack[-1]}/{name}"
        if draw(st.booleans()):
            entries.append(Entry(path, True, depth))
            stack.append(path)
        else:
            desc = draw(st.none() | _TEXT)
            entries.append(Entry(path + ".md", False, depth, draw(st.integers(0, 10**7)), desc))
    return entries


def _rich(lines: list[str]) -> str:
    """What the old code printed: rich, 500 lines a call, to a file that is no terminal."""
    out = io.StringIO()
    console = Console(file=out, soft_wrap=True, highlight=False)
    for start in range(0, len(lines), 500):
        console.print("\n".join(lines[start : start + 500]))
    return out.getvalue()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_trees(), st.booleans(), st.booleans())
def test_plain_lines_are_what_rich_prints(entries: list[Entry], marked: bool,
                                          cut: bool) -> None:
    files = [e.path for e in entries if not e.is_dir]
    marks = {p: "[SYNC CONFLICT: view it to reconcile]" for p in files[:1]} if marked else {}
    hidden = {e.path: 3 for e in entries if e.is_dir} if cut else {}
    listed = [(e.path, e.is_dir, e.depth, e.size, e.description) for e in entries]
    expected = _rich(tree_lines("/memories", entries, marks, hidden))
    assert "\n".join(tree_text("/memories", listed, marks, hidden, plain_console())) + "\n" \
        == expected


def _old_lines(top: str, entries: list[Entry]) -> list[str]:
    """The old drawing (children grouped by folder, a stack of pending entries)."""
    children: dict[str, list[Entry]] = {}
    for entry in entries:
        children.setdefault(entry.path.rsplit("/", 1)[0], []).append(entry)
    lines = [top]

    def pending(folder: str, prefix: str) -> list[tuple[Entry, str, bool]]:
        kids = children.get(folder, [])
        return [(e, prefix, k == len(kids) - 1) for k, e in enumerate(kids)][::-1]

    stack = pending(top, "")
    while stack:
        entry, prefix, last = stack.pop()
        lines.append(f"{prefix}{'└── ' if last else '├── '}{entry.path}")
        if entry.is_dir:
            stack.extend(pending(entry.path, prefix + ("    " if last else "│   ")))
    return lines


@st.composite
def _plain_trees(draw: st.DrawFn) -> list[Entry]:
    entries: list[Entry] = []
    stack = ["/memories"]
    for k in range(draw(st.integers(0, 40))):
        depth = draw(st.integers(1, len(stack)))
        del stack[depth:]
        path = f"{stack[-1]}/n{k}"
        is_dir = draw(st.booleans())
        entries.append(Entry(path, is_dir, depth, 1, "d"))
        if is_dir:
            stack.append(path)
    return entries


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_plain_trees())
def test_branches_are_drawn_as_the_old_drawing_drew_them(entries: list[Entry]) -> None:
    listed = [(e.path, e.is_dir, e.depth, e.size, e.description) for e in entries]
    got = tree_text("/memories", listed)
    want = _old_lines("/memories", entries)
    assert len(got) == len(want)
    for line, old in zip(got[1:], want[1:], strict=True):
        start = old[: old.index("/memories")]
        name = old.rsplit("/", 1)[-1]
        assert line.startswith(start + name)


def test_tree_of_odd_names_prints_what_rich_printed(runner: CliRunner, tmp_path: Path) -> None:
    root = tmp_path / "s"
    store = Store(root, create=True)
    store.write("/memories/a.md", DOC.format(name="a", desc="'quoted: [b]x[/b] \\\\[z :smile:'"))
    store.write("/memories/we[i]rd/b.md", DOC.format(name="b", desc='"tab\\there\\r"'))
    store.write("/memories/c.md", DOC.format(name="c", desc="plain words"))
    store.write("/memories/d.md", DOC.format(name="d", desc="x :thumbs_up: y"))
    (root / "new\nline.md").write_text(DOC.format(name="n", desc="a"))
    result = runner.invoke(app, ["tree", str(root)])
    assert result.exit_code == 0, result.output
    entries = store.walk()
    lines = tree_lines("/memories", entries)
    lines.append(f"[dim]{sum(e.is_dir for e in entries)} folder(s), "
                 f"{sum(not e.is_dir for e in entries)} file(s)[/]")
    assert result.stdout == _rich(lines)
    assert "😄" in result.stdout and "we[i]rd/" in result.stdout


@pytest.mark.skipif(not hasattr(sys, "addaudithook"), reason="needs audit hooks")
def test_tree_lists_each_folder_once_and_opens_only_the_files_it_shows(
    tmp_path: Path,
) -> None:
    import subprocess

    root = tmp_path / "s"
    store = Store(root, create=True)
    for folder in ("a", "a/b", "a/b/c", "d"):
        for name in ("x", "y"):
            store.write(f"/memories/{folder}/{name}.md", DOC.format(name=name, desc="n"))
    code = (
        "import os, sys\n"
        "from typer.testing import CliRunner\n"
        "from memdir.cli import app\n"
        "seen = []\n"
        "def hook(event, args):\n"
        "    if event == 'os.scandir' or (event == 'open' and str(args[0]).endswith('.md')):\n"
        "        seen.append(event)\n"
        "runner = CliRunner()\n"
        "sys.addaudithook(hook)\n"
        "r = runner.invoke(app, ['tree', sys.argv[1], *sys.argv[2:]])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(seen.count('os.scandir'), seen.count('open'))\n"
    )
    for args, opened in (([], 8), (["--depth", "1"], 0), (["--depth", "2"], 4)):
        done = subprocess.run([sys.executable, "-c", code, str(root), *args],
                              capture_output=True, text=True, check=True)
        assert done.stdout.split() == ["5", str(opened)], (args, done.stdout)
