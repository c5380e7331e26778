"""memdir's anthropic profile against the Anthropic SDK's reference memory tool.

Generated command sequences (a hypothesis state machine) and a fixed corpus of
the commands Claude typically sends run on both implementations, each on its
own temporary folder. After every command both must agree on the outcome
(success or error), hold the same tree with the same bytes, and answer with the
same text, except where the reference crashes with a Python exception (its tool
runner then sends the exception's repr, which memdir replaces by a sentence).

Where memdir answers differently on purpose, the case is in :data:`DELIBERATE`
with its reason; the generators never produce those inputs.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anthropic_pair import Pair, tree
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from memdir.tools.anthropic import Profile

# Path pieces Claude uses (any extension, no frontmatter, nested folders), plus the
# awkward ones: '..' that stays inside or climbs out, '.', paths outside /memories.
NAMES = ["progress.md", "user_preferences.md", "notes.xml", "todo.txt", "a", "b", "é ü.md",
         # Near-spellings of the names above, each a distinct entry for both tools:
         # another case, the NFD form, a final dot.
         "Progress.md", unicodedata.normalize("NFD", "é ü.md"), "a."]
PIECES = [*NAMES, "..", "."]
TEXT = st.text(alphabet="ab #\n\r-é", max_size=24)
NEEDLE = st.text(alphabet="ab\n", max_size=3)
SEED = ["/memories/progress.md", "/memories/notes.xml", "/memories/a/b/todo.txt"]


@st.composite
def memory_paths(draw: st.DrawFn) -> str:
    """A path as a model might write it: mostly under /memories, sometimes not."""
    piece = st.sampled_from(NAMES) | st.sampled_from(PIECES)
    pieces = draw(st.lists(piece, min_size=1, max_size=3))
    path = "/memories" + "".join("/" + piece for piece in pieces)
    if draw(st.integers(0, 9)) == 0:
        path += "/"
    if draw(st.integers(0, 19)) == 0:
        path = draw(st.sampled_from(["/etc/passwd", "memories/a", "/tmp/x.md", "", "/"]))
    return path


def extra_keys() -> st.SearchStrategy[dict[str, Any]]:
    """Keys the reference ignores (a model sometimes adds such)."""
    return st.sampled_from([{}, {}, {}, {"reason": "keep track"}, {"description": "x"}])


class Differential(RuleBasedStateMachine):
    """Each rule sends one generated command to both tools and compares everything."""

    pair: Pair

    def __init__(self) -> None:
        super().__init__()
        self.pair = Pair(_fresh_dir())

    def send(self, command: dict[str, Any]) -> None:
        theirs, ours = self.pair.run(command)
        assert theirs.is_error == ours.is_error, (command, theirs, ours)
        if not theirs.crashed:
            assert theirs.text == ours.text, (command, theirs, ours)
        assert tree(self.pair.reference_root) == tree(self.pair.store.root), command

    @initialize(texts=st.lists(TEXT, min_size=3, max_size=3))
    def seed(self, texts: list[str]) -> None:
        for path, text in zip(SEED, texts, strict=True):
            self.send({"command": "create", "path": path, "file_text": text})

    def path(self, data: st.DataObject, files_only: bool = False) -> str:
        """Mostly a path that exists now (so edits succeed), otherwise a generated one."""
        existing = [
            f"/memories/{rel}".rstrip("/")
            for rel, content in tree(self.pair.reference_root).items()
            if content is not None or not files_only
        ]
        if existing and data.draw(st.integers(0, 2)) > 0:
            return data.draw(st.sampled_from(sorted(existing)))
        return data.draw(memory_paths())

    def needle(self, data: st.DataObject, path: str) -> str:
        """Mostly a piece of the file's current text, so that it occurs once or more."""
        host = self.pair.reference_root / path.removeprefix("/memories").lstrip("/")
        if host.is_file() and data.draw(st.booleans()):
            text = host.read_text(encoding="utf-8")
            start = data.draw(st.integers(0, len(text)))
            return text[start : start + data.draw(st.integers(0, 6))]
        return data.draw(NEEDLE)

    @rule(data=st.data(), view_range=st.none() | st.lists(st.integers(-3, 9), max_size=3),
          extra=extra_keys())
    def view(self, data: st.DataObject, view_range: list[int] | None,
             extra: dict[str, Any]) -> None:
        command: dict[str, Any] = {"command": "view", "path": self.path(data), **extra}
        if view_range is not None:
            command["view_range"] = view_range
        self.send(command)

    @rule(path=memory_paths(), text=TEXT, extra=extra_keys())
    def create(self, path: str, text: str, extra: dict[str, Any]) -> None:
        self.send({"command": "create", "path": path, "file_text": text, **extra})

    @rule(data=st.data(), new=TEXT)
    def str_replace(self, data: st.DataObject, new: str) -> None:
        path = self.path(data, files_only=True)
        old = self.needle(data, path)
        self.send({"command": "str_replace", "path": path, "old_str": old, "new_str": new})

    @rule(data=st.data(), line=st.integers(-2, 9), text=TEXT)
    def insert(self, data: st.DataObject, line: int, text: str) -> None:
        path = self.path(data, files_only=True)
        self.send({"command": "insert", "path": path, "insert_line": line, "insert_text": text})

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        self.send({"command": "delete", "path": self.path(data)})

    @rule(data=st.data(), new=memory_paths())
    def rename(self, data: st.DataObject, new: str) -> None:
        self.send({"command": "rename", "old_path": self.path(data), "new_path": new})

    def teardown(self) -> None:
        TALLY.update(self.pair.counts)


# Sequences per run; set MEMDIR_DIFFERENTIAL_EXAMPLES higher for a longer search.
EXAMPLES = int(os.environ.get("MEMDIR_DIFFERENTIAL_EXAMPLES", "25"))
TALLY: Counter[str] = Counter()
_DIRS: list[Path] = []


def _fresh_dir() -> Path:
    base = _DIRS[0] / f"run-{TALLY['runs']}"
    TALLY["runs"] += 1
    base.mkdir()
    return base


@pytest.mark.slow
def test_generated_sequences_agree(tmp_path: Path) -> None:
    _DIRS[:] = [tmp_path]
    TALLY.clear()
    run_state_machine_as_test(
        Differential,
        settings=settings(max_examples=EXAMPLES, stateful_step_count=30, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow]),
    )
    commands = TALLY["commands"]
    print(f"\ndifferential: {dict(TALLY)}")
    assert commands >= 250
    assert TALLY["outcomes equal"] == commands
    assert TALLY["trees equal"] == commands
    assert TALLY["texts equal"] + TALLY["reference raised (no text to match)"] == commands


@dataclass(frozen=True)
class Deliberate:
    """A command on which memdir answers differently from the reference, on purpose."""

    name: str
    command: dict[str, Any]
    reason: str
    setup: Callable[[Path], None] = lambda root: None
    """Prepares each root (the reference's, then memdir's) before the command."""
    memdir_refuses: bool = True
    lines: int = 1
    """Lines of memdir's answer (a cut message ends with a line saying so)."""
    modes: bool = False
    """The difference is in the permission bits left on disk, so compare them too."""


def _link_inside(root: Path) -> None:
    (root / "real.md").write_text("kept\n")
    (root / "alias.md").symlink_to(root / "real.md")


def _folder_link_inside(root: Path) -> None:
    (root / "real").mkdir()
    (root / "real" / "x.md").write_text("kept\n")
    (root / "alias").symlink_to(root / "real")


def _notes(root: Path) -> None:
    (root / "notes.txt").write_text("hello\n")


def _shared_notes(root: Path) -> None:
    _notes(root)
    os.chmod(root / "notes.txt", 0o644)


def _link_outside(root: Path) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not yours\n")
    (root / "escape").symlink_to(outside)


DELIBERATE = [
    Deliberate("symlink escape", {"command": "view", "path": "/memories/escape/secret.txt"},
               "Both refuse a link that leads out of the root; memdir names the link instead "
               "of the reference's 'would escape' wording.", _link_outside),
    Deliberate("symlink inside the root", {"command": "view", "path": "/memories/alias.md"},
               "memdir never reads or writes through a symbolic link, even one that stays "
               "inside the root; the reference follows it.", _link_inside),
    Deliberate("folder symlink inside the root",
               {"command": "view", "path": "/memories/alias/x.md"},
               "memdir opens every folder on a path without following links, so a folder "
               "swapped for a link while a command runs cannot redirect it; the reference "
               "follows a folder link that stays inside.", _folder_link_inside),
    Deliberate("delete through a symlink", {"command": "delete", "path": "/memories/alias.md"},
               "memdir deletes the link itself; the reference deletes the file it points "
               "to.", _link_inside, memdir_refuses=False),
    Deliberate("hidden name", {"command": "create", "path": "/memories/.env", "file_text": "x"},
               "Names starting with '.' are reserved for memdir's own state (.memdir, .git); "
               "the reference writes them and then hides them from its listing."),
    Deliberate("/memories prefix glued to a name",
               {"command": "create", "path": "/memoriesX/a.md", "file_text": "x"},
               "The reference reads /memoriesX/a.md as /memories/X/a.md; memdir refuses "
               "instead of guessing."),
    Deliberate("backslash in a name",
               {"command": "create", "path": "/memories/a\\b.md", "file_text": "x"},
               "memdir asks for forward slashes; the reference makes a file named 'a\\b.md'."),
    Deliberate("control character in a name",
               {"command": "create", "path": "/memories/a\nb.md", "file_text": "x"},
               "memdir refuses control characters in names; the reference makes the file."),
    Deliberate("path ending in whitespace",
               {"command": "create", "path": "/memories/a.md ", "file_text": "x"},
               "memdir refuses a trailing space and never trims one; the reference makes a "
               "file named 'a.md '."),
    Deliberate("name inside a path edged with a space",
               {"command": "create", "path": "/memories/dir /x.txt", "file_text": "x"},
               "memdir refuses a name that begins or ends with whitespace wherever it sits "
               "('dir ' and 'dir' look alike in every listing, and trimming one made delete "
               "remove the other); the reference makes a folder named 'dir '."),
    Deliberate("no-break space ending a name",
               {"command": "create", "path": "/memories/dir\u00a0/x.txt", "file_text": "x"},
               "Unicode whitespace counts as whitespace; the reference makes 'dir\u00a0'."),
    Deliberate("C1 control character in a name",
               {"command": "create", "path": "/memories/a\x85b.txt", "file_text": "x"},
               "U+0085 (next line) is a control character and a line break for Python's "
               "splitlines; memdir refuses it as it refuses C0 controls."),
    Deliberate("path deeper than the store keeps",
               {"command": "create", "path": "/memories/" + "d/" * 32 + "x.txt",
                "file_text": "x"},
               "memdir makes no entry more than 32 levels below /memories (MAX_DEPTH), so no "
               "tool that walks the tree meets hundreds of levels; the reference has no cap."),
    Deliberate("path longer than the store keeps",
               {"command": "create", "path": "/memories/" + "/".join(["y" * 200] * 6),
                "file_text": "x"},
               "memdir makes no path longer than 1,024 bytes below /memories "
               "(MAX_PATH_BYTES); the reference has no cap."),
    Deliberate("error text over 4,000 characters",
               {"command": "str_replace", "path": "/memories/notes.txt",
                "old_str": "never there " * 500, "new_str": "x"},
               "Error messages are cut at 4,000 characters with a line saying so (the "
               "reference echoes a huge old_str, or lists every line of a repeated one, in "
               "full); the wording up to the cut is the reference's.", _notes, lines=2),
    Deliberate("an edit keeps the file's permission bits",
               {"command": "str_replace", "path": "/memories/notes.txt",
                "old_str": "hello", "new_str": "bye"},
               "memdir keeps the bits an existing file has (here 0644, set by its owner); "
               "the reference's atomic write leaves every edited file 0600. New files are "
               "0600 and new folders 0700 in both.", _shared_notes, memdir_refuses=False,
               lines=3, modes=True),
    Deliberate("file over the size cap",
               {"command": "create", "path": "/memories/big.md", "file_text": "x" * 2048},
               "memdir keeps its per-file size cap (1 KiB in this test); the reference has "
               "none."),
]


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode)
            for p in root.rglob("*") if ".memdir" not in p.parts}


@pytest.mark.parametrize("case", DELIBERATE, ids=lambda case: case.name)
def test_deliberate_differences(tmp_path: Path, case: Deliberate) -> None:
    pair = Pair(tmp_path, max_file_bytes=1024)
    case.setup(pair.reference_root)
    case.setup(pair.store.root)
    theirs, ours = pair.run(case.command)

    def state(root: Path) -> object:
        return tree(root), (_modes(root) if case.modes else None)

    assert ours.is_error == case.memdir_refuses, ours
    assert (theirs, state(pair.reference_root)) != (ours, state(pair.store.root))
    assert "Traceback" not in ours.text and len(ours.text.splitlines()) == case.lines
    assert tree(pair.store.root.parent / "outside") in ({}, {"secret.txt": b"not yours\n"})


def _c(command: str, **fields: Any) -> dict[str, Any]:
    return {"command": command, **fields}


PREFS = "# User preferences\n- prefers short answers\n- timezone: CET\n"
PROGRESS = "# Progress\n\n## Done\n- read the brief\n\n## Next\n- draft the outline\n"
NOTES = '<notes>\n  <note id="1">API keys live in the vault</note>\n</notes>\n'

# The commands of a Claude-shaped session (the memory tool's documented flow plus the
# mistakes models make), in order; the side-by-side check used such a corpus.
CORPUS: list[dict[str, Any]] = [
    _c("view", path="/memories"),
    _c("create", path="/memories/progress.md", file_text=PROGRESS),
    _c("create", path="/memories/user_preferences.md", file_text=PREFS),
    _c("create", path="/memories/notes.xml", file_text=NOTES),
    _c("create", path="/memories/projects/alpha/status.txt", file_text="on track\n"),
    _c("create", path="/memories/scratch", file_text="no extension at all"),
    _c("view", path="/memories"),
    _c("view", path="/memories/"),
    _c("view", path="/memories/progress.md"),
    _c("view", path="/memories/progress.md", view_range=[1, 3]),
    _c("view", path="/memories/progress.md", view_range=[3, -1]),
    _c("view", path="/memories/progress.md", view_range=[0, 100]),
    _c("view", path="/memories/progress.md", view_range=[6, 2]),
    _c("view", path="/memories/progress.md", view_range=[2]),
    _c("view", path="/memories/progress.md", view_range=[50, 60]),
    _c("view", path="/memories/notes.xml"),
    _c("view", path="/memories/scratch"),
    _c("view", path="/memories/projects"),
    _c("view", path="/memories/missing.md"),
    _c("view", path="/memories/projects/../progress.md"),
    _c("view", path="/memories/../etc/passwd"),
    _c("view", path="/etc/passwd"),
    _c("view", path="memories/progress.md"),
    _c("view", path="/memories/./projects/alpha"),
    _c("view", path="/memories/progress.md", reason="check what is done"),
    _c("create", path="/memories/progress.md", file_text="again"),
    _c("create", path="/memories/projects", file_text="a folder"),
    _c("create", path="/memories/a/../b/c.md", file_text="folded\n"),
    _c("create", path="/memories/empty.md", file_text=""),
    _c("view", path="/memories/empty.md"),
    _c("str_replace", path="/memories/progress.md", old_str="- draft the outline",
       new_str="- draft the outline\n- review with the user"),
    _c("str_replace", path="/memories/progress.md", old_str="- read", new_str="- reread"),
    _c("str_replace", path="/memories/progress.md", old_str="not there", new_str="x"),
    _c("str_replace", path="/memories/progress.md", old_str="- ", new_str="* "),
    _c("str_replace", path="/memories/user_preferences.md", old_str="CET", new_str="UTC"),
    _c("str_replace", path="/memories/notes.xml", old_str='id="1"', new_str='id="n1"'),
    _c("str_replace", path="/memories/missing.md", old_str="a", new_str="b"),
    _c("str_replace", path="/memories/projects", old_str="a", new_str="b"),
    _c("str_replace", path="/memories/empty.md", old_str="", new_str="filled\n"),
    _c("insert", path="/memories/progress.md", insert_line=0, insert_text="<!-- top -->"),
    _c("insert", path="/memories/progress.md", insert_line=3, insert_text="- one more\n"),
    _c("insert", path="/memories/progress.md", insert_line=99, insert_text="x"),
    _c("insert", path="/memories/progress.md", insert_line=-1, insert_text="x"),
    _c("insert", path="/memories/scratch", insert_line=1, insert_text="appended"),
    _c("insert", path="/memories/missing.md", insert_line=0, insert_text="x"),
    _c("insert", path="/memories/notes.xml", insert_line=3, insert_text="<!-- end -->\n"),
    _c("view", path="/memories/progress.md"),
    _c("rename", old_path="/memories/scratch", new_path="/memories/archive/scratch.txt"),
    _c("rename", old_path="/memories/user_preferences.md",
       new_path="/memories/user/preferences.md"),
    _c("rename", old_path="/memories/notes.xml", new_path="/memories/progress.md"),
    _c("rename", old_path="/memories/missing.md", new_path="/memories/found.md"),
    _c("rename", old_path="/memories", new_path="/memories/root"),
    _c("rename", old_path="/memories/projects", new_path="/memories/work/projects"),
    _c("view", path="/memories"),
    _c("delete", path="/memories/archive/scratch.txt"),
    _c("view", path="/memories/archive"),
    _c("delete", path="/memories/work"),
    _c("delete", path="/memories/missing.md"),
    _c("delete", path="/memories"),
    _c("delete", path="/memories/../memories"),
    _c("view", path="/memories"),
    _c("create", path="/memories/archive/again.md", file_text="the folder stayed\n"),
    _c("view", path="/memories/archive/again.md", view_range=[1, -1]),
    _c("undo", path="/memories/progress.md"),
    _c("view", path="/memories", unknown_flag=True),
]


def run_corpus(base: Path, profile: Profile) -> Counter[str]:
    """Run :data:`CORPUS` on the reference and on memdir with ``profile``; tally the agreement."""
    pair = Pair(base, profile=profile)
    for command in CORPUS:
        pair.run(command)
    return pair.counts


def test_the_claude_session_corpus_agrees(tmp_path: Path) -> None:
    assert len(CORPUS) == 65
    counts = run_corpus(tmp_path, "anthropic")
    print(f"\ncorpus, anthropic profile: {dict(counts)}")
    assert counts["outcomes equal"] == counts["trees equal"] == 65
    assert counts["texts equal"] + counts["reference raised (no text to match)"] == 65
