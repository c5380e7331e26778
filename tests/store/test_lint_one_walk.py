"""lint from one walk: the same findings as each check made on its own, each file read once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store import Store, check_xref, lint_store, load_document
from memdir.store._frontmatter import _split

DOC = "---\nname: {name}\ndescription: About {name}.\n---\n{body}"


def _store(root: Path) -> Store:
    store = Store(root, create=True)
    store.write("/memories/a/one.md", DOC.format(name="one", body=(
        "# One\n## Work\n### 2023\ntext\n## Play\n"
        "See /memories/a/two.md > ## Work and /memories/a/./two.md > ## Nope.\n"
        "See /memories/a/../a/two.md, /memories/gone.md; /memories/b/one.md\n")))
    store.write("/memories/a/two.md", DOC.format(name="two", body=(
        "## Work\nx\n## Work\ny\n"
        "See /memories/a/one.md > ## Work > ### 2023 and /memories/a/one.md > ### 2023.\n"
        "See /memories/a/one.md > ## Work, /memories/a/./one.md > ## Play\n"
        "and /memories/a//one.md > ## Nothing and /memories/a/two.md > ## Work\n")))
    store.write("/memories/b/one.md", DOC.format(name="one", body=(
        "body /memories/x\\y.md and /memories/a/one.md > ## Play; /memories/b/none.md\n")))
    (root / "latin.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    store.write("/memories/c/three.md", DOC.format(name="three", body=(
        "/memories/latin.md and /memories/c/three.md > # Missing\n")))
    return store


def test_every_reference_gets_the_answer_check_xref_gives_it(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    expected: list[tuple[str, int]] = []
    for path in store.files():
        if path == "/memories/latin.md":
            continue
        doc = load_document(store, path)
        for ref in doc.xrefs:
            if check_xref(store, ref) is not None:
                expected.append((path, ref.line))
    got = [(f.path, f.line) for f in lint_store(store) if f.code == "dangling-reference"]
    assert sorted(got) == sorted(expected)
    assert len(got) >= 7


def test_lint_lists_each_folder_once_and_reads_each_file_once(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _store(root)
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from memdir.cli import app\n"
        "seen = []\n"
        "def hook(event, args):\n"
        "    if event == 'os.scandir' or (event == 'open' and str(args[0]).endswith('.md')):\n"
        "        seen.append(event)\n"
        "runner = CliRunner()\n"
        "sys.addaudithook(hook)\n"
        "r = runner.invoke(app, ['lint', sys.argv[1], '--json'])\n"
        "assert r.exit_code == 1, r.output\n"
        "print(seen.count('os.scandir'), seen.count('open'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True,
                          text=True, check=True)
    folders = 1 + sum(len(d) for _, d, _ in os.walk(root / "a")) + 3  # root, a, b, c
    files = 5 + 1  # each file once; the one not in UTF-8 is read again by the store
    assert done.stdout.split() == [str(folders), str(files)], done.stdout


def _old_split(text: str) -> tuple[str | None, str, int, str | None]:
    """The header split as it was written before (lines split and joined back)."""
    lines = text.split("\n")
    if not lines or lines[0].lstrip("\ufeff").rstrip("\r") != "---":
        return None, text, 1, "missing-frontmatter"
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2, None
    return None, text, 1, "unclosed-frontmatter"


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["---", "\n", "\r", "\ufeff", "a", "--", "----", " ---",
                                 "--- ", "\n---\n", "x: y", "\r\n", "\u2028", "\x85"]),
                max_size=14))
def test_the_header_is_split_as_the_line_by_line_split_did(pieces: list[str]) -> None:
    text = "".join(pieces)
    header, body, line, defect = _split(text)
    assert (header, body, line, None if defect is None else defect.code) == _old_split(text)
