"""PersonaMem: the real 32k questions, and the full loader on our fixture."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from memdir.bench import (
    PERSONAMEM_CATEGORIES,
    Dataset,
    DatasetError,
    load_personamem,
    load_personamem_questions,
    personamem_prefix,
    terminal_questions,
)


def test_real_questions(personamem_csv: Path) -> None:
    questions = load_personamem_questions(personamem_csv)
    assert len(questions) == 589
    assert len({q.conversation_id for q in questions}) == 37
    assert len({q.meta["persona_id"] for q in questions}) == 20
    assert Counter(len(q.options) for q in questions) == {4: 589}
    assert {q.answer for q in questions} == {"(a)", "(b)", "(c)", "(d)"}
    assert {q.category_name for q in questions} <= set(PERSONAMEM_CATEGORIES.values())
    for q in questions:
        labels = [opt[:3] for opt in q.options]
        assert labels == ["(a)", "(b)", "(c)", "(d)"]


def test_real_rows_use_both_option_formats(personamem_csv: Path) -> None:
    text = personamem_csv.read_text(encoding="utf-8")
    assert '""(a)' in text and "['(a)" in text
    questions = load_personamem_questions(personamem_csv)
    first = questions[0]
    assert first.id == "acd74206-37dc-4756-94a8-b99a395d9a21"
    assert first.answer == "(c)" and first.end_index == 182


def test_order_counts_per_context(personamem_csv: Path) -> None:
    questions = load_personamem_questions(personamem_csv)
    per: dict[str, list[int]] = {}
    for q in questions:
        per.setdefault(q.conversation_id, []).append(q.order or 0)
    assert all(orders == list(range(1, len(orders) + 1)) for orders in per.values())


def test_real_questions_without_their_contexts_fail_clearly(
    personamem_csv: Path, fixture_dir: Path
) -> None:
    with pytest.raises(DatasetError, match="lacks 37 context"):
        load_personamem(personamem_csv, fixture_dir / "shared_contexts_fixture.jsonl")


def test_fixture_blocks_and_locators(persona_fixture: Dataset) -> None:
    assert len(persona_fixture.conversations) == 2
    first = persona_fixture.conversations[0]
    assert [len(s.turns) for s in first.sessions] == [7, 4]
    assert first.sessions[0].turns[0].locator == "B1M1"
    assert first.sessions[0].turns[0].speaker == "System"
    assert first.sessions[1].turns[1].locator == "B2M2"
    assert first.sessions[1].turns[1].speaker == "User"
    assert first.sessions[1].turns[1].text.startswith("My cello teacher")
    assert first.speakers == ["User", "Assistant"]
    assert persona_fixture.conversations[1].speakers == ["Patient", "Therapist"]
    assert first.meta == {"persona_id": "7"}


def test_fixture_questions(persona_fixture: Dataset) -> None:
    by_id = {q.id[-1]: q for q in persona_fixture.questions}
    assert by_id["1"].options[1].startswith("(b) Since you now bake")
    assert by_id["2"].options[1].startswith("(b) You found scales dull")
    assert [q.order for q in persona_fixture.questions] == [1, 2, 1, 3]


def test_prefix_and_terminal_checkpoint(persona_fixture: Dataset) -> None:
    conv = persona_fixture.conversations[0]
    seen = personamem_prefix(conv, 7)
    assert [t.locator for t in seen.turns] == [f"B1M{i}" for i in range(1, 8)]
    assert len(personamem_prefix(conv, 11).turns) == 11
    last = terminal_questions(persona_fixture, conv.id)
    assert {q.end_index for q in last} == {11} and len(last) == 2


def test_end_index_past_the_context_is_an_error(fixture_dir: Path, tmp_path: Path) -> None:
    rows = (fixture_dir / "questions_fixture.csv").read_text().splitlines()
    rows[3] = rows[3].rsplit(",", 1)[0] + ",99"
    bad = tmp_path / "questions.csv"
    bad.write_text("\n".join(rows) + "\n")
    with pytest.raises(DatasetError, match="end index 99 is past the end"):
        load_personamem(bad, fixture_dir / "shared_contexts_fixture.jsonl")


def test_broken_context_line_names_the_line(fixture_dir: Path, tmp_path: Path) -> None:
    contexts = tmp_path / "contexts.jsonl"
    lines = (fixture_dir / "shared_contexts_fixture.jsonl").read_text().splitlines()
    contexts.write_text(lines[1] + "\n" + lines[2][:-5] + "\n")
    with pytest.raises(DatasetError, match=r"contexts\.jsonl: line 2 is not valid JSON"):
        load_personamem(fixture_dir / "questions_fixture.csv", contexts)


def test_missing_column_and_bad_options(fixture_dir: Path, tmp_path: Path) -> None:
    text = (fixture_dir / "questions_fixture.csv").read_text()
    no_column = tmp_path / "a.csv"
    no_column.write_text(text.replace("correct_answer", "gold", 1))
    with pytest.raises(DatasetError, match="missing column.*correct_answer"):
        load_personamem_questions(no_column)
    bad_options = tmp_path / "b.csv"
    lines = text.splitlines()
    head, _, _ = lines[3].partition(",\"[")
    bad_options.write_text("\n".join([lines[0], head + ",\"[oops\",x,1"]) + "\n")
    with pytest.raises(DatasetError, match="b.csv: row at line 2"):
        load_personamem_questions(bad_options)


def test_context_entry_must_be_one_keyed_list(fixture_dir: Path, tmp_path: Path) -> None:
    contexts = tmp_path / "c.jsonl"
    wanted = "cc3523e12a0a265eb5f4f8d6b48743e0365c3290e39f5658cb3dce6ba7901ba0"
    contexts.write_text(json.dumps({wanted: [], "b": []}) + "\n")
    with pytest.raises(DatasetError, match="line 1: expected one"):
        load_personamem(fixture_dir / "questions_fixture.csv", contexts)
