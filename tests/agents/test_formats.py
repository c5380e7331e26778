"""Every text format one module writes and another parses: written, then read back.

Each format has one definition (a formatter and its pattern) in the writer's module,
and the readers import that pattern; these tests run the real writer (the tools
over a real store, the chunk renderer, the citation formatter) on awkward names,
spaces, unicode and ``#`` in headings, and check that the pattern gives back
exactly what was written.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.agents._citations import CITATION, find_citations, format_citation, resolve_citations
from memdir.conversation import (
    LOCATOR,
    LOCATOR_GROUP,
    LOCATOR_IN_TEXT,
    TURN_HEAD,
    Turn,
    block_locator,
    parse_locator,
    render_turn,
    turn_locator,
)
from memdir.store import Store
from memdir.tools import make_toolset
from memdir.tools._grep import GREP_HIT, GREP_SUMMARY
from memdir.tools._ranked import CHUNK_HEADER, RANKED_FILE, RANKED_LINE
from memdir.tools._view import LISTING_ENTRY, NUMBERED_LINE

SRC = Path(__file__).resolve().parents[2] / "src" / "memdir"

ODD_FILES = {
    "/memories/my notes/café #1.md": "Dinner at Café Olé, line one.\nThe pâté was good.\n",
    "/memories/people/zoë (old).md": "Zoë moved to Zürich.\n",
    "/memories/日本/東京 trip.md": "We saw the 東京 tower.\n",
    "/memories/plain.md": "A plain file about the tower.\n",
}


def _md(path: str, body: str) -> str:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return f"---\nname: {stem}\ndescription: {_description(stem)}\n---\n{body}"


def _description(stem: str) -> str:
    return f"notes on {stem.replace('#', 'no.')} (with brackets) - and a dash"


@pytest.fixture
def odd(store: Store) -> Store:
    for path, body in ODD_FILES.items():
        store.write(path, _md(path, body))
    return store


# -- source locators (conversation/) --------------------------------------------------


@given(st.integers(1, 10_000), st.integers(1, 10_000))
def test_locators_round_trip(session: int, turn: int) -> None:
    for make in (turn_locator, block_locator):
        written = make(session, turn)
        assert LOCATOR.match(written)
        assert parse_locator(written) == parse_locator(f"[{written}]") == (session, turn)
        assert LOCATOR_IN_TEXT.findall(f"as said in {written}, then") == [written]


def test_a_rendered_turn_opens_with_its_locator_tag() -> None:
    turn = Turn(locator="S12T7", speaker="Zoë Ó'Brien", text="We ate at #3, Café Olé.")
    line = render_turn(turn)
    head = TURN_HEAD.match(line)
    assert head is not None and head.group(1) == "S12T7"
    assert line[head.end():] == "Zoë Ó'Brien: We ate at #3, Café Olé."


def test_a_bracketed_tag_of_several_locators_reads_back_each() -> None:
    text = "Zoë likes tea [S1T2, S1T5; B3M4] but not [S9] or S1T2X."
    groups = LOCATOR_GROUP.findall(text)
    assert groups == ["S1T2, S1T5; B3M4"]
    assert LOCATOR_IN_TEXT.findall(groups[0]) == ["S1T2", "S1T5", "B3M4"]
    assert LOCATOR_IN_TEXT.findall(text) == ["S1T2", "S1T5", "B3M4"]


# -- citations (agents/_citations.py) -------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "section"),
    [(None, None, ()), (3, None, ()), (3, 3, ()), (2, 9, ()),
     (None, None, ("# Café #1", "## Work history")), (None, None, ("# 東京",))],
)
@pytest.mark.parametrize("path", [*ODD_FILES, "/memories/a.md"])
def test_citations_round_trip(path: str, start: int | None, end: int | None,
                              section: tuple[str, ...]) -> None:
    written = format_citation(path, start, end, section)
    [found] = find_citations(f"The answer is here {written}, and nowhere else.")
    assert found.raw == written
    assert (found.path, found.start, found.end, found.section) == (
        path, start, end if end is not None else start, section,
    )


def test_several_paths_in_one_bracket_are_not_one_path() -> None:
    assert CITATION.search("see [/memories/a.md, /memories/b.md]") is None
    assert [c.path for c in find_citations("[/memories/a.md] and [/memories/b c.md:L2]")] == [
        "/memories/a.md", "/memories/b c.md",
    ]


def test_a_written_citation_resolves_in_the_store(odd: Store) -> None:
    path = "/memories/my notes/café #1.md"
    [cited] = resolve_citations(odd, f"Olé {format_citation(path, 5, 6)}")
    assert cited.resolved and cited.content == ODD_FILES[path].rstrip("\n")


# -- view, grep and the ranked tools (tools/) -----------------------------------------


async def test_numbered_lines_round_trip(odd: Store) -> None:
    path = "/memories/my notes/café #1.md"
    shown = (await make_toolset("read", odd).call("view", {"path": path})).content
    lines = {int(m["number"]): m["text"] for m in NUMBERED_LINE.finditer(shown)}
    assert lines == dict(enumerate(_md(path, ODD_FILES[path]).rstrip("\n").split("\n"), 1))


async def test_listing_entries_round_trip(odd: Store) -> None:
    shown = (await make_toolset("read", odd).call("view", {"path": "/memories"})).content
    entries = {m["name"]: m for m in LISTING_ENTRY.finditer(shown)}
    names = {p.rsplit("/", 1)[-1] for p in ODD_FILES}
    assert set(entries) == names
    for name, match in entries.items():
        assert match["description"] == _description(name.removesuffix(".md"))
    assert entries["plain.md"]["indent"] == ""
    assert entries["café #1.md"]["indent"] == "  "


async def test_grep_hits_round_trip(odd: Store) -> None:
    shown = (await make_toolset("read", odd).call(
        "grep", {"pattern": "tower|Olé|Zürich", "ignore_case": True})).content
    summary = GREP_SUMMARY.match(shown)
    assert summary is not None
    assert (summary["total"], summary["files"], summary["where"]) == ("4", "4", "/memories")
    hits = {(m["path"], int(m["line"]), m["text"]) for m in GREP_HIT.finditer(shown)}
    assert hits == {
        ("/memories/my notes/café #1.md", 5, "Dinner at Café Olé, line one."),
        ("/memories/people/zoë (old).md", 5, "Zoë moved to Zürich."),
        ("/memories/日本/東京 trip.md", 5, "We saw the 東京 tower."),
        ("/memories/plain.md", 5, "A plain file about the tower."),
    }


async def test_ranked_search_round_trip(odd: Store) -> None:
    shown = (await make_toolset("bm25", odd).call("search", {"query": "tower"})).content
    files = [m["path"] for m in RANKED_FILE.finditer(shown)]
    assert sorted(files) == ["/memories/plain.md", "/memories/日本/東京 trip.md"]
    assert [int(m["rank"]) for m in RANKED_FILE.finditer(shown)] == [1, 2]
    assert {m["text"] for m in RANKED_LINE.finditer(shown)} >= {"We saw the 東京 tower."}


async def test_chunk_headers_round_trip(odd: Store) -> None:
    shown = (await make_toolset("chunk", odd).call(
        "bm25_chunk_retrieve", {"query": "tower Zürich"})).content
    assert {m["path"] for m in CHUNK_HEADER.finditer(shown)} == {
        "/memories/plain.md", "/memories/日本/東京 trip.md", "/memories/people/zoë (old).md",
    }


# -- one definition each --------------------------------------------------------------

# Text that, spelled as a regular expression anywhere in src/, means a second reader
# of one of the formats above (each format's own definition is exempt).
_SPELLINGS = {
    "locator": (re.compile(r"S\\d\+T\\d\+|\[SB\]\\d"), {"conversation/_model.py"}),
    "numbered line": (re.compile(r"\\d\+\)?\\t"), {"tools/_view.py"}),
    "grep hit": (re.compile(r"\\\.md\)?:\(?\\d\+"), {"tools/_grep.py"}),
    "chunk header": (re.compile(r"\^=== "), {"tools/_ranked.py"}),
    "ranked line": (re.compile(r"\^\(?\\d\+\)?\\\. |\^\(?   L"), {"tools/_ranked.py"}),
    "citation": (re.compile(r"\\\[\(?\??P?<?\w*>?/memories"), {"agents/_citations.py"}),
}


_REGEX_CALLS = {"compile", "match", "fullmatch", "search", "findall", "finditer", "sub", "split"}


def _regex_literals(path: Path) -> list[str]:
    """The string pieces of every pattern given to a regex function in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr in _REGEX_CALLS
             and isinstance(n.func.value, ast.Name) and n.func.value.id in {"re", "regex"}]
    return [piece.value for call in calls[:] for arg in call.args[:1] for piece in ast.walk(arg)
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str)]


@pytest.mark.parametrize("name", sorted(_SPELLINGS))
def test_each_format_is_spelled_once_in_src(name: str) -> None:
    spelling, homes = _SPELLINGS[name]
    found = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if str(path.relative_to(SRC)) not in homes
        and any(spelling.search(text) for text in _regex_literals(path))
    )
    assert found == [], f"a second pattern for the {name} format in {found}"
