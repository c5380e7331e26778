"""PersonaMem grading on a fixed set of answer shapes: which option each one chose.

The shapes are the ones a search agent's answer takes (a bare letter, a letter
with its reasons, a letter then a mention of another option, the option's text
without a letter, hedges and refusals). The expected choice follows the paper's
output contract: the chosen option is stated in the answer's first sentence
(see memdir.bench._options). The options are a real PersonaMem question's, read
from ../shared/data where it is present (skipped where absent), else the
shipped fixture's.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from memdir.bench import Question, extract_option, grade_option, load_personamem

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "personamem"
QUESTIONS_32K = DATA / "questions_32k.csv"

SHAPES: list[tuple[str, str, str | None]] = [
    # (shape, answer with {gold}/{other} as option letters and {text} as the gold's text,
    #  the option it chose: "gold", "other" or None)
    ("bare letter", "{gold}", "gold"),
    ("bare letter, parenthesised", "({gold})", "gold"),
    ("bare letter, capital with a dot", "{GOLD}.", "gold"),
    ("letter on its own line, then reasons", "{GOLD}.\nYou said so in [B3M4].", "gold"),
    ("letter with reasoning", "({gold}) Since you said so recently [B3M4], this fits.", "gold"),
    ("named answer", "Answer: ({gold}). The store says so [B3M4].", "gold"),
    ("option in a sentence", "I would pick option ({gold}), as [B3M4] shows.", "gold"),
    ("letter then another option",
     "({gold}) fits your latest preference [B3M4]. Option ({other}) was what you liked "
     "earlier [B1M2].", "gold"),
    ("letter then another option, one sentence",
     "({gold}), since option ({other}) was your earlier choice [B1M2].", "gold"),
    ("letter preferred over another", "({gold}) over ({other}), because of [B3M4].", "gold"),
    ("choice with a negated option", "I pick ({gold}), not ({other}).", "gold"),
    ("ruled out first, then chosen",
     "Not ({other}): that was earlier. The answer is ({gold}) [B3M4].", "gold"),
    ("option text without a letter", "{text} [B3M4]", "gold"),
    ("wrong letter", "({other}) Since you said so [B3M4].", "other"),
    ("hedge between two", "({gold}) or ({other}).", None),
    ("two letters, neither stated first", "Between ({other}) and ({gold}) I cannot tell.", None),
    ("refusal", "I could not find this in memory, so I cannot choose an option.", None),
    ("not found", "Not found in the store.", None),
    ("empty", "", None),
]


def _question() -> Question:
    if QUESTIONS_32K.exists():  # the questions file alone: its contexts are not needed here
        with QUESTIONS_32K.open(newline="", encoding="utf-8") as handle:
            row = next(csv.DictReader(handle))
        return Question(id=row["question_id"], benchmark="personamem",
                        conversation_id=row["shared_context_id"],
                        text=row["user_question_or_message"], answer=row["correct_answer"],
                        category=1, category_name=row["question_type"],
                        options=json.loads(row["all_options"]), order=1)
    fixtures = Path(__file__).parent / "fixtures" / "personamem"
    dataset = load_personamem(fixtures / "questions_fixture.csv",
                              fixtures / "shared_contexts_fixture.jsonl")
    return next(q for q in dataset.questions if len(q.options) >= 2)


def _answer(template: str, question: Question) -> tuple[str, str, str]:
    assert question.answer is not None
    gold = question.answer.strip("()")
    other = next(chr(ord("a") + i) for i in range(len(question.options))
                 if chr(ord("a") + i) != gold)
    text = question.options[ord(gold) - ord("a")].split(")", 1)[1].strip()
    answer = template.format(gold=gold, GOLD=gold.upper(), other=other, text=text)
    return answer, gold, other


@pytest.mark.parametrize(("shape", "template", "chose"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_answer_shape_is_graded_by_the_option_it_chose(
        shape: str, template: str, chose: str | None) -> None:
    question = _question()
    answer, gold, other = _answer(template, question)
    expected = {"gold": f"({gold})", "other": f"({other})", None: None}[chose]
    assert extract_option(answer, question.options) == expected, (shape, answer)
    assert grade_option(question, answer) is (chose == "gold")


def test_the_issue_shape_a_choice_then_the_earlier_option() -> None:
    # The answer that issue 22 found graded wrong: it names (b) and mentions (a).
    answer = ("(b) Since you now prefer white bread [B12M3]; option (a) was your earlier "
              "taste [B2M7].")
    assert extract_option(answer) == "(b)"


def test_option_text_needs_the_whole_text_of_exactly_one_option() -> None:
    options = ["(a) Try the jazz club downtown.", "(b) Try the jazz club downtown tonight.",
               "(c) Stay home."]
    assert extract_option("Try the jazz club downtown tonight.", options) == "(b)"
    assert extract_option("Try the jazz club downtown.", options) == "(a)"
    assert extract_option("You could try the jazz club.", options) is None  # no whole text
    assert extract_option("Try the jazz club downtown. Or stay home.", options) is None
