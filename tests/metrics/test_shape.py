"""Panel A on small stores whose values are worked out by hand."""

from __future__ import annotations

import pytest
from metrics_helpers import fm

from memdir.metrics import gini, measure_state, measure_store
from memdir.store import Store

# Unit texts of 10, 20, 30 and 40 bytes, so the size Gini is easy to work out.
T10, T20, T30, T40 = "a" * 10, "b" * 20, "c" * 30, "d" * 40

SMALL = {
    # depth 1, no headings: one unit
    "/memories/a.md": fm("a", "A file") + T10 + "\n",
    # folder f (depth 1) / b.md (depth 2): One (3) > Two (4), Three (3)
    "/memories/f/b.md": fm("b", "B file") + f"# One\n\n## Two\n{T20}\n# Three\n{T30}\n",
    # c.md (2): Top (3) > Deep, a '###' directly under '#'
    "/memories/f/c.md": fm("c", "C file") + f"# Top\n### Deep\n{T40}\n",
}


def test_counts_depth_fanout_and_gini_by_hand() -> None:
    shape = measure_state(SMALL).shape
    assert (shape.folders, shape.files, shape.sections) == (1, 3, 5)
    # leaves: a.md (1), Two (4), Three (3), Deep (one below Top: 4)
    assert shape.units == shape.leaves == 4
    assert shape.sackin == 1 + 4 + 3 + 4
    assert shape.mean_leaf_depth == pytest.approx(12 / 4)
    assert shape.max_depth == 4
    # children: root 2 (a.md, f), f 2 (b, c), b.md 2 (One, Three), One 1, c.md 1, Top 1
    assert shape.mean_fanout == pytest.approx((2 + 2 + 2 + 1 + 1 + 1) / 6)
    # Gini of [10, 20, 30, 40]: 2*(1*10+2*20+3*30+4*40)/(4*100) - 5/4 = 1.5 - 1.25
    assert shape.size_gini == pytest.approx(0.25)
    assert shape.bytes == sum(len(t.encode()) for t in SMALL.values())


def test_level_mode_counts_skipped_heading_levels() -> None:
    shape = measure_state(SMALL, heading_depth="level").shape
    # Deep is a '###' under a '#': two levels below Top, so depth 5
    assert shape.sackin == 1 + 4 + 3 + 5
    assert shape.max_depth == 5


def test_file_starting_at_level_two_puts_headings_right_below_it() -> None:
    files = {"/memories/x.md": fm("x", "X") + "## Only\n" + T10 + "\n"}
    for mode in ("nesting", "level"):
        shape = measure_state(files, heading_depth=mode).shape  # type: ignore[arg-type]
        assert shape.max_depth == 2


def test_gini_edge_cases() -> None:
    assert gini([]) is None
    assert gini([5, 5, 5]) == pytest.approx(0.0)
    # [0, 0, 10]: 2*(3*10)/(3*10) - 4/3 = 2/3
    assert gini([0, 0, 10]) == pytest.approx(2 / 3)
    assert gini([0, 0]) == 0.0


def test_empty_store(store: Store) -> None:
    shape = measure_store(store).shape
    assert (shape.files, shape.units, shape.leaves) == (0, 0, 0)
    assert shape.mean_leaf_depth is None and shape.size_gini is None


REFS = {
    "/memories/people/alice.md": fm("alice", "Alice") + "# Work\nNurse.\n",
    "/memories/notes.md": fm("notes", "Notes")
    + "see /memories/people/alice.md\n"  # resolves
    + "see /memories/people/alice.md > # Work\n"  # resolves, section exists
    + "see /memories/people/alice.md > # Hobbies\n"  # file exists, section does not
    + "see /memories/people/bob.md\n",  # no such file
}


def test_cross_references_and_dangling(store: Store) -> None:
    for path, text in REFS.items():
        store.create(path, text)
    live = measure_store(store).shape
    state = measure_state(REFS).shape
    for shape in (live, state):
        assert shape.xrefs == 4
        assert [(d.line, d.target) for d in shape.dangling] == [
            (7, "/memories/people/alice.md"),
            (8, "/memories/people/bob.md"),
        ]
        assert all(d.path == "/memories/notes.md" for d in shape.dangling)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "# A\ntext\n## B\n```\n# not a heading\n```\n### C\nmore\n",
            [(1, "A", 5), (2, "B", 7), (3, "C", 11)],
        ),
        (
            "intro\n\nSetext\n======\n\n- item\n  # heading in a list\n\n<div>\n# html\n</div>\n",
            [(1, "Setext", 7), (1, "heading in a list", 11)],
        ),
        (
            "## *Emphasis* and `code` heading ##\n\n> # quoted\n",
            [(2, "*Emphasis* and `code` heading", 5), (1, "quoted", 7)],
        ),
    ],
)
def test_summary_headings_are_the_store_parser_headings(
    body: str, expected: list[tuple[int, str, int]]
) -> None:
    from memdir.metrics._files import summarize
    from memdir.store import headings, parse_document, sections

    assert [(h.level, h.text, h.line) for h in headings(body, 5)] == expected
    text = fm("x", "X") + body
    doc = parse_document("/memories/x.md", text)
    summary = summarize(text)
    assert [(h.level, h.text, h.line) for h in summary.headings] == [
        (s.heading.level, s.heading.text, s.start) for s in doc.sections
    ]
    assert len(sections(doc.body)) == len(summary.headings)


def test_walked_targets_skip_the_path_check_with_the_same_answers(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from memdir.metrics import _measure
    from memdir.store import MAX_DEPTH

    for path, text in REFS.items():
        store.create(path, text)
    deep = store.root.joinpath(*[f"d{k}" for k in range(MAX_DEPTH)], "deep.md")
    deep.parent.mkdir(parents=True)
    deep.write_text(fm("deep", "Too deep for the store") + "x\n")
    os.symlink(store.root / "people" / "alice.md", store.root / "people" / "link.md")
    deep_path = "/memories/" + "/".join(f"d{k}" for k in range(MAX_DEPTH)) + "/deep.md"
    store.write("/memories/cites.md", fm("cites", "Cites odd targets")
                + f"see {deep_path}\nsee /memories/people/link.md\n"
                + "see /memories/people/alice.md > # Work\n")
    checked: list[str] = []
    real_check = _measure.check_xref

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        checked.append(args[1].target)
        return real_check(*args, **kwargs)

    monkeypatch.setattr(_measure, "check_xref", counted)
    new = measure_store(store).shape.dangling
    assert "/memories/people/alice.md" not in checked  # a walked file: no realpath
    assert "/memories/people/bob.md" in checked and "/memories/people/link.md" in checked
    monkeypatch.setattr(_measure, "_walked_file", lambda *args: False)  # every target checked
    old = measure_store(store).shape.dangling
    assert new == old
    assert {d.target for d in new} >= {"/memories/people/bob.md", "/memories/people/link.md"}
