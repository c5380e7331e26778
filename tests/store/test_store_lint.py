"""Lint reports every kind of defect; fix_store repairs the mechanical ones."""

from __future__ import annotations

from memdir.store import Store, XRef, check_xref, fix_store, lint_store, parse_file

DEFECTIVE = {
    "no-header.md": "# Just a title\n\ntext\n",
    "unclosed.md": "---\nname: unclosed\ndescription: x\n",
    "bad-yaml.md": "---\nname: [bad-yaml\n---\n",
    "listy.md": "---\n- a\n---\n",
    "nameless.md": "---\ndescription: x\n---\n",
    "badname.md": "---\nname: Bad Name\ndescription: x\n---\n",
    "mismatch.md": "---\nname: other\ndescription: x\n---\n",
    "nodesc.md": "---\nname: nodesc\n---\n",
    "multi.md": "---\nname: multi\ndescription: \"one\\ntwo\"\n---\n",
    "long.md": "---\nname: long\ndescription: " + "y" * 300 + "\n---\n",
    "meta.md": "---\nname: meta\ndescription: x\nmetadata: 5\n---\n",
}
EXPECTED = {
    "no-header.md": "missing-frontmatter",
    "unclosed.md": "unclosed-frontmatter",
    "bad-yaml.md": "invalid-yaml",
    "listy.md": "invalid-frontmatter",
    "nameless.md": "missing-name",
    "badname.md": "bad-name",
    "mismatch.md": "name-mismatch",
    "nodesc.md": "missing-description",
    "multi.md": "multiline-description",
    "long.md": "long-description",
    "meta.md": "bad-metadata",
}


def _fill(store: Store) -> None:
    for name, text in DEFECTIVE.items():
        (store.root / name).write_text(text)
    store.write(
        "/memories/refs.md",
        "---\nname: refs\ndescription: references\n---\n# Refs\n"
        "see /memories/missing.md\n"
        "see /memories/target.md > ## Nowhere\n"
        "see /memories/target.md > ## Here\n",
    )
    store.write("/memories/target.md", "---\nname: target\ndescription: t\n---\n## Here\nx\n")
    (store.root / "notes.txt").write_text("stray")
    (store.root / "binary.md").write_bytes(b"\xff\xfe")


def test_every_defect_kind_is_found(store: Store) -> None:
    _fill(store)
    findings = lint_store(store)
    by_path: dict[str, set[str]] = {}
    for f in findings:
        by_path.setdefault(f.path, set()).add(f.code)
    for name, code in EXPECTED.items():
        assert code in by_path[f"/memories/{name}"], name
    assert by_path["/memories/refs.md"] == {"dangling-reference"}
    dangling = [f for f in findings if f.code == "dangling-reference"]
    assert [f.line for f in dangling] == [6, 7]
    assert "no section" in dangling[1].message
    assert by_path["/memories/notes.txt"] == {"not-markdown"}
    assert by_path["/memories/binary.md"] == {"unreadable"}
    assert "/memories/target.md" not in by_path
    assert findings == sorted(findings, key=lambda f: (f.path, f.line or 0, f.code))
    assert str(dangling[0]).startswith("/memories/refs.md:6: dangling-reference")


def test_skill_schema_is_checked_only_when_asked(store: Store) -> None:
    store.write("/memories/s.md", "---\nname: s\ndescription: a skill\n---\nsteps\n")
    assert lint_store(store) == []
    codes = [f.code for f in lint_store(store, skills=True)]
    assert codes == ["bad-metadata"]


def test_check_xref(store: Store) -> None:
    store.write("/memories/t.md", "---\nname: t\ndescription: t\n---\n# A\n## B\n")
    assert check_xref(store, XRef("/memories/t.md", ("A", "B"), 1)) is None
    assert "does not exist" in (check_xref(store, XRef("/memories/u.md", (), 1)) or "")
    assert "no section" in (check_xref(store, XRef("/memories/t.md", ("C",), 1)) or "")
    assert "'..'" in (check_xref(store, XRef("/memories/../t.md", (), 1)) or "")


def test_fix_store_repairs_mechanical_defects(store: Store) -> None:
    _fill(store)
    (store.root / "binary.md").unlink()
    fixed = {(f.path, f.code) for f in fix_store(store)}
    assert fixed == {
        ("/memories/no-header.md", "missing-frontmatter"),
        ("/memories/nameless.md", "missing-name"),
        ("/memories/badname.md", "bad-name"),
        ("/memories/mismatch.md", "name-mismatch"),
        ("/memories/multi.md", "multiline-description"),
    }
    header = parse_file(store.read("/memories/no-header.md"), "no-header")
    assert header.defects == []
    assert header.frontmatter is not None and header.frontmatter.description == "Just a title"
    assert header.body.startswith("# Just a title")
    remaining = {(f.path, f.code) for f in lint_store(store)}
    assert ("/memories/long.md", "long-description") in remaining
    assert not any(code in {"name-mismatch", "bad-name", "missing-name"} for _, code in remaining)
    assert fix_store(store) == []  # idempotent
