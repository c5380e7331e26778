"""The defective-gold catalog matches the real conv-50 and splits questions both ways."""

from __future__ import annotations

from memdir.bench import (
    Dataset,
    check_defective_gold,
    defective_gold,
    is_defective,
    split_defective,
)


def test_catalog_entries() -> None:
    entries = defective_gold()
    assert [(e.conversation_id, e.order) for e in entries] == [
        ("conv-50", 20), ("conv-50", 64), ("conv-50", 112), ("conv-50", 138),
    ]
    assert all(e.problem for e in entries)


def test_catalog_matches_the_real_questions(locomo: Dataset) -> None:
    assert check_defective_gold(locomo) == []


def test_split_with_and_without(locomo: Dataset) -> None:
    questions = locomo.questions_for("conv-50")
    kept, defective = split_defective(questions)
    assert len(kept) == 154 and [q.order for q in defective] == [20, 64, 112, 138]
    assert defective[0].text == "Which places or events has Calvin visited in Tokyo?"
    assert not any(is_defective(q) for q in locomo.questions_for("conv-26"))


def test_a_mismatch_is_reported(locomo: Dataset) -> None:
    changed = [
        q.model_copy(update={"text": "something else"}) if q.order == 20 and
        q.conversation_id == "conv-50" else q
        for q in locomo.questions
    ]
    broken = locomo.model_copy(update={"questions": changed})
    problems = check_defective_gold(broken)
    assert len(problems) == 1 and "order 20" in problems[0]
