"""Token F1 the LoCoMo way, and option extraction for PersonaMem."""

from __future__ import annotations

import pytest

from memdir.bench import (
    Benchmark,
    Dataset,
    Question,
    answer_f1,
    extract_option,
    grade_option,
    multi_answer_f1,
    normalize_answer,
    option_correct,
    token_f1,
)


def _q(category: int, answer: str | None, benchmark: Benchmark = "locomo") -> Question:
    return Question(
        id="x", benchmark=benchmark, conversation_id="c", text="?", answer=answer,
        category=category, category_name="any", order=1 if category != 5 else None,
    )


def test_normalisation() -> None:
    assert normalize_answer("The Cat, and a Dog!") == "cat dog"
    assert normalize_answer("  7 May   2023. ") == "7 may 2023"


def test_token_f1_values() -> None:
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    assert token_f1("on 7 May", "7 May 2023") == pytest.approx(2 * (2 / 3) * (2 / 3) / (4 / 3))
    assert token_f1("nothing here", "7 May 2023") == 0.0
    assert token_f1("running guitars", "ran guitar run") > 0.5


def test_multi_hop_splits_at_commas() -> None:
    gold = "music festival, Shibuya crossing, Shinjuku"
    assert multi_answer_f1("Shinjuku, music festival, Shibuya crossing", gold) == 1.0
    assert multi_answer_f1("Shinjuku", gold) == pytest.approx(1 / 3)


def test_answer_f1_by_category() -> None:
    assert answer_f1(_q(1, "x, y"), "y, x") == 1.0
    assert answer_f1(_q(3, "Psychology; counseling"), "psychology") == 1.0
    assert answer_f1(_q(5, None), "That is not mentioned anywhere.") == 1.0
    assert answer_f1(_q(5, None), "Yes") == 0.0
    assert answer_f1(_q(3, "yes; because", "realtalk"), "yes") < 1.0
    with pytest.raises(ValueError, match="no gold"):
        answer_f1(_q(2, None), "x")


def test_answer_f1_on_real_golds(locomo: Dataset) -> None:
    for question in locomo.questions_for("conv-50"):
        gold = question.answer or ""
        said = gold.split(";")[0] if question.category == 3 else gold
        assert answer_f1(question, said) == pytest.approx(1.0), question.id


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("(b)", "(b)"),
        ("The answer is (C) because you said so.", "(c)"),
        ("(b) Since you now bake white bread", "(b)"),
        ("b", "(b)"),
        ("D.", "(d)"),
        ("Answer: a", "(a)"),
        ("option c", "(c)"),
        ("I pick (a), not (b).", "(a)"),
        ("(a) or (b)", None),
        ("I would say it is a good one", None),
        ("", None),
        ("none of them", None),
    ],
)
def test_extract_option(answer: str, expected: str | None) -> None:
    assert extract_option(answer) == expected


def test_option_grading(persona_fixture: Dataset) -> None:
    question = persona_fixture.questions[0]
    assert grade_option(question, "(b) rosemary loaf")
    assert not grade_option(question, "(a)")
    assert not option_correct("(a) or (b)", "(b)")
    with pytest.raises(ValueError, match="multiple choice"):
        answer_f1(question, "(b)")
    with pytest.raises(ValueError, match="not a multiple-choice"):
        grade_option(_q(2, "x"), "(a)")
