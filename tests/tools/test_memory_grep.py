"""grep: exact line-by-line answers, scoping, truncation, and errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memdir.store import Store
from memdir.tools import ToolSet
from memdir.tools._grep import MAX_LINE_CHARS, grep_store
from memdir.tools._memory import read_set


@pytest.fixture
def tools(store: Store) -> ToolSet:
    store.write("/memories/people/alice.md",
                "---\nname: alice\ndescription: Alice, likes tea\n---\nTea at 5.\ncoffee never\n")
    store.write("/memories/people/bob.md",
                "---\nname: bob\ndescription: Bob\n---\nbob drinks TEA\n")
    store.write("/memories/work.md", "---\nname: work\ndescription: Work\n---\nno drinks\n")
    return read_set(store)


async def test_grep_finds_lines_with_paths_and_numbers(tools: ToolSet) -> None:
    result = await tools.call("grep", {"pattern": "tea", "ignore_case": True})
    assert not result.is_error
    assert result.content.splitlines() == [
        "3 matching line(s) in 2 file(s) under /memories:",
        "/memories/people/alice.md:3: description: Alice, likes tea",
        "/memories/people/alice.md:5: Tea at 5.",
        "/memories/people/bob.md:5: bob drinks TEA",
    ]


async def test_grep_is_case_sensitive_by_default_and_scoped(tools: ToolSet) -> None:
    result = await tools.call("grep", {"pattern": "drinks", "path": "/memories/people"})
    assert result.content.splitlines()[1:] == ["/memories/people/bob.md:5: bob drinks TEA"]
    single = await tools.call("grep", {"pattern": "^name", "path": "/memories/work.md"})
    assert single.content.splitlines()[1:] == ["/memories/work.md:2: name: work"]


async def test_grep_truncation_says_how_many_more(tools: ToolSet) -> None:
    result = await tools.call("grep", {"pattern": "e", "max_results": 2})
    lines = result.content.splitlines()
    total = int(lines[0].split()[0])
    assert len(lines) == 4
    assert lines[-1].startswith(f"[{total - 2} more matching line(s) not shown")
    assert "max_results" in lines[-1]


async def test_grep_no_match_suggests_widening(tools: ToolSet) -> None:
    result = await tools.call("grep", {"pattern": "zebra"})
    assert not result.is_error
    assert "No lines match" in result.content and "ignore_case" in result.content


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"pattern": "tea("}, "not a valid Python regular expression"),
        ({"pattern": "[a-"}, "not a valid Python regular expression"),
        ({"pattern": ""}, "empty"),
        ({"pattern": "x", "max_results": 0}, "between 1 and"),
        ({"pattern": "x", "path": "/memories/nowhere"}, "does not exist"),
        ({"pattern": "x", "path": "/memories/../x"}, "'..'"),
        ({"pattern": "x", "max_results": "lots"}, "max_results"),
    ],
)
async def test_grep_errors(tools: ToolSet, args: dict[str, object], message: str) -> None:
    result = await tools.call("grep", args)
    assert result.is_error
    assert message in result.content


async def test_grep_trims_long_lines_around_the_match(store: Store) -> None:
    line = "x" * 1000 + "NEEDLE" + "y" * 1000
    store.write("/memories/long.md", f"---\nname: long\ndescription: d\n---\n{line}\n")
    result = await read_set(store).call("grep", {"pattern": "NEEDLE"})
    shown = result.content.splitlines()[1]
    assert "NEEDLE" in shown
    assert len(shown) < MAX_LINE_CHARS + 40
    assert shown.startswith("/memories/long.md:5: ...") and shown.endswith("...")


async def test_grep_skips_hidden_and_non_markdown(store: Store) -> None:
    store.write("/memories/a.md", "---\nname: a\ndescription: d\n---\nneedle\n")
    (store.root / "b.txt").write_text("needle\n")
    (store.root / ".hidden").mkdir()
    (store.root / ".hidden" / "c.md").write_text("needle\n")
    hits = list(grep_store(store, "needle"))
    assert [(h.path, h.line) for h in hits] == [("/memories/a.md", 5)]


@pytest.mark.parametrize(
    ("pattern", "text", "lines"),
    # \B matches an empty line: the regex engine does what re does from Python 3.14 on.
    [("\\B", "ab\n\nc\n", [1, 2]), ("a$", "a\r\na\n", [2]), ("^$", "x\n\ny\n", [2]),
     ("b\\Z", "ab\nb c\n", [1]), ("a(?!b)", "ab\na\n", [2]),
     ("(?i)kss", "x\n\u212a\u017fs\n", [2]),
     # The one case-folding difference from re: i does not match the dotless \u0131.
     ("(?i)kiss", "x\n\u212a\u0131\u017fs\n", []), ("(?i)kiss", "x\n\u212ai\u017fs\n", [2]),
     ("(?i)is", "\u0130S\n", [1]),
     ("alice|bob", "bob\nal ice\nalice\n", [1, 3])],
)
def test_grep_line_semantics(store: Store, pattern: str, text: str, lines: list[int]) -> None:
    (store.root / "f.md").write_bytes(text.encode())
    assert [h.line for h in grep_store(store, pattern)] == lines


def _naive(root: Path, pattern: str, ignore_case: bool) -> list[tuple[str, int]]:
    """Line by line with the engine grep uses (regex in its re-compatible mode)."""
    rx = regex.compile(pattern, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))
    found = []
    for path in sorted(root.glob("*.md")):
        text = path.read_bytes().decode()
        if text.endswith("\n"):
            text = text[:-1]
        for number, line in enumerate(text.split("\n"), start=1):
            if rx.search(line):
                found.append((f"/memories/{path.name}", number))
    return found


_ATOMS = st.sampled_from(
    ["a", "b", "ab", " ", ".", "^", "$", "\\s", "\\S", "\\b", "\\B", "\\w", "[^a]", "(a|b)",
     "a*", "b+", "a?", "\\Z", "\\A", "(?=a)", "(?!b)", "(?<=a)", "(?<!b)", "a*+", "(?>a|ab)",
     "(?s:.)", "(?-i:a)", "[\\s\\S]", "\\n", "A", ".", "ab|ba", "(is|ks)+", "(?i)", "(?i:ab)",
     "SK", "\u0130s", "\u017fk", "ss", "fi"]
)
# \u00df and \ufb01 case-fold to two ASCII letters ("ss", "fi") that IGNORECASE never
# matches: the search must not take them for hits, nor a byte check miss real ones.
_TEXT = st.text(alphabet="ab A\n\r\tiksfKS\u0130\u0131\u017f\u212a\u00e9\u00df\ufb01",
                max_size=40)


@pytest.fixture(scope="module")
def grep_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("grep")


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(atoms=st.lists(_ATOMS, min_size=1, max_size=4), texts=st.lists(_TEXT, max_size=3),
       ignore_case=st.booleans())
def test_grep_equals_a_naive_line_by_line_search(
    grep_root: Path, atoms: list[str], texts: list[str], ignore_case: bool
) -> None:
    pattern = "".join(atoms)
    try:
        re.compile(pattern)
    except re.error:
        assume(False)
    for old in grep_root.iterdir():
        old.unlink() if old.is_file() else None
    store = Store(grep_root)
    for index, text in enumerate(texts):
        (grep_root / f"f{index}.md").write_bytes(text.encode())
    got = [(h.path, h.line) for h in grep_store(store, pattern, ignore_case=ignore_case)]
    assert got == _naive(grep_root, pattern, ignore_case)
    once = grep_store(store, pattern, ignore_case=ignore_case, cache=False)
    assert [(h.path, h.line) for h in once] == got


def test_undecodable_bytes_are_searched_as_replacement_characters(store: Store) -> None:
    (store.root / "latin.md").write_bytes(b"caf\xe9 au lait\nplain caf\n")
    assert [h.line for h in grep_store(store, "caf")] == [1, 2]
    assert [h.line for h in grep_store(store, "caf\ufffd au")] == [1]
    assert [h.line for h in grep_store(store, "CAF\ufffd", ignore_case=True)] == [1]


@pytest.mark.parametrize("cache", [True, False])
def test_files_are_read_folder_by_folder_in_path_order(store: Store, cache: bool) -> None:
    for path in ["/memories/a/x.md", "/memories/a-b/y.md", "/memories/a.md",
                 "/memories/a/y/z.md", "/memories/a/zz.md", "/memories/b.md",
                 "/memories/a/y.md", "/memories/a/y-z/w.md", "/memories/a b/c.md"]:
        store.write(path, f"---\nname: {path.rsplit('/', 1)[1][:-3]}\ndescription: d\n---\n"
                          f"needle in {path}\n")
    hits = [h.path for h in grep_store(store, "needle", cache=cache)]
    assert hits == sorted(store.files()) and len(hits) == 9


def test_a_file_swapped_for_a_link_after_the_walk_is_not_followed(store: Store,
                                                                 tmp_path: Path) -> None:
    store.write("/memories/a.md", "---\nname: a\ndescription: d\n---\nsecret-free\n")
    store.write("/memories/b.md", "---\nname: b\ndescription: d\n---\nsecret-free\n")
    outside = tmp_path / "outside.md"
    outside.write_text("needle outside the store\n")
    nodes = [n for n in store.tree() if n.kind == "memory"]
    (store.root / "a.md").unlink()
    (store.root / "a.md").symlink_to(outside)
    read = {node.virtual: data for node, data in store.read_nodes(nodes)}
    assert read["/memories/a.md"] is None and read["/memories/b.md"] is not None
