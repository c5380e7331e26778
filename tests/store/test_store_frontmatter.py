"""Frontmatter parsing, defects, and round trips that keep unknown keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.store import (
    DESCRIPTION_MAX_CHARS,
    Frontmatter,
    Store,
    entry_sources,
    parse_document,
    parse_file,
    render_file,
    slugify,
    validate_skill_metadata,
)

GOOD = "---\nname: alice\ndescription: Alice, a friend from work\n---\n# Alice\n\nLikes tea.\n"


def test_good_file_parses_cleanly() -> None:
    parsed = parse_file(GOOD, "alice")
    assert parsed.defects == []
    assert parsed.frontmatter is not None
    assert parsed.frontmatter.name == "alice"
    assert parsed.frontmatter.description == "Alice, a friend from work"
    assert parsed.body == "# Alice\n\nLikes tea.\n"
    assert parsed.body_line == 5


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("# no header\n", "missing-frontmatter"),
        ("---\nname: alice\ndescription: x\n", "unclosed-frontmatter"),
        ("---\nname: [alice\n---\n", "invalid-yaml"),
        ("---\n- a\n- b\n---\n", "invalid-frontmatter"),
        ("---\ndescription: x\n---\n", "missing-name"),
        ("---\nname: Alice Smith\ndescription: x\n---\n", "bad-name"),
        ("---\nname: bob\ndescription: x\n---\n", "name-mismatch"),
        ("---\nname: alice\n---\n", "missing-description"),
        ("---\nname: alice\ndescription: \"one\\ntwo\"\n---\n", "multiline-description"),
        (f"---\nname: alice\ndescription: {'x' * (DESCRIPTION_MAX_CHARS + 1)}\n---\n",
         "long-description"),
        ("---\nname: alice\ndescription: x\nmetadata: 3\n---\n", "bad-metadata"),
    ],
)
def test_each_defect_is_reported(text: str, code: str) -> None:
    defects = parse_file(text, "alice").defects
    assert code in {d.code for d in defects}
    assert all(d.message for d in defects)


def test_invalid_yaml_points_at_the_line() -> None:
    defects = parse_file("---\nname: alice\ndescription: [x\n---\n", "alice").defects
    assert defects[0].code == "invalid-yaml"
    assert defects[0].line is not None and defects[0].line >= 3


def test_unknown_keys_survive_a_round_trip() -> None:
    text = (
        "---\nname: alice\ndescription: Alice\nmetadata:\n  type: note\n  tags: [a, b]\n"
        "created: '2024-01-02'\nowner: team-x\n---\nBody line\n"
    )
    parsed = parse_file(text, "alice")
    assert parsed.frontmatter is not None
    assert parsed.frontmatter.model_extra == {"created": "2024-01-02", "owner": "team-x"}
    again = render_file(parsed.frontmatter, parsed.body)
    reparsed = parse_file(again, "alice")
    assert reparsed.defects == []
    assert reparsed.frontmatter == parsed.frontmatter
    assert reparsed.raw_header == parsed.raw_header
    assert reparsed.body == "Body line\n"


def test_render_puts_known_keys_first() -> None:
    fm = Frontmatter.model_validate({"zeta": 1, "description": "d", "name": "n"})
    assert render_file(fm, "\n\nx\n") == "---\nname: n\ndescription: d\nzeta: 1\n---\nx\n"


def test_document_exposes_name_description_and_line_numbers() -> None:
    doc = parse_document("/memories/people/alice.md", GOOD)
    assert doc.name == "alice"
    assert doc.description.startswith("Alice")
    assert [(h.text, h.line) for h in doc.headings] == [("Alice", 5)]


def test_skill_metadata_schema() -> None:
    ok = Frontmatter(name="s", description="d",
                     metadata={"type": "skill", "sources": [{"task": "t1", "outcome": "success"}]})
    assert validate_skill_metadata(ok) == []
    bad = Frontmatter(name="s", description="d", metadata={"type": "recipe", "sources": []})
    problems = validate_skill_metadata(bad)
    assert problems and "type" in problems[0].message and "sources" in problems[0].message
    assert validate_skill_metadata(Frontmatter(name="s", description="d"))[0].code == "bad-metadata"


def test_skill_sources_may_be_a_body_section() -> None:
    # The paper accepts an entry's sources in metadata.sources or in a "## Sources" section.
    typed = Frontmatter(name="s", description="d", metadata={"type": "note"})
    body = "# Lesson\nOpen it first.\n\n## Sources\n- {task: t1, outcome: failure}\n- t2: success\n"
    assert validate_skill_metadata(typed, body) == []
    assert entry_sources(typed, body) == [("t1", "failure"), ("t2", "success")]
    missing = validate_skill_metadata(typed, "# Lesson\nOpen it first.\n")
    assert missing and "## Sources" in missing[0].message
    assert "no attempt is recorded" in validate_skill_metadata(typed)[0].message
    vague = validate_skill_metadata(typed, "## Sources\n- an earlier run\n")
    assert vague and "names no task and outcome" in vague[0].message


@pytest.mark.parametrize(
    ("text", "slug"),
    [("Alice Smith", "alice-smith"), ("  Trip to Paris!! 2023 ", "trip-to-paris-2023"),
     ("***", "untitled")],
)
def test_slugify(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_bad_metadata_is_reported_once() -> None:
    defects = parse_file("---\nname: a\ndescription: x\nmetadata: 5\n---\n", "a").defects
    assert [d.code for d in defects] == ["bad-metadata"]


def test_description_must_be_text() -> None:
    defects = parse_file("---\nname: a\ndescription: [x, y]\n---\n", "a").defects
    assert [d.code for d in defects] == ["bad-description"]


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    text = "\ufeff---\nname: a\ndescription: With a BOM\n---\nbody\n"
    parsed = parse_file(text, "a")
    assert parsed.defects == [] and parsed.body == "body\n" and parsed.body_line == 5
    store = Store(tmp_path / "s", create=True)
    (store.root / "a.md").write_text(text, encoding="utf-8")
    assert store.description("/memories/a.md") == "With a BOM"


def test_lint_for_skills_reads_a_sources_section(tmp_path: Path) -> None:
    from memdir.store import lint_store

    store = Store(tmp_path)
    store.write("/memories/open-first.md", "---\nname: open-first\ndescription: d\nmetadata:\n"
                "  type: note\n---\n# Lesson\nOpen it first.\n\n## Sources\n- t1: failure\n")
    store.write("/memories/unsourced.md", "---\nname: unsourced\ndescription: d\nmetadata:\n"
                "  type: note\n---\n# Lesson\nOpen it first.\n")
    flagged = {f.path for f in lint_store(store, skills=True) if f.code == "bad-metadata"}
    assert flagged == {"/memories/unsourced.md"}
