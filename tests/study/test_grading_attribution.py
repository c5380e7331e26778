"""PersonaMem answers: option match decides correctness, the judge grades attribution only."""

from __future__ import annotations

from memdir.agents import PriceTable
from memdir.bench import Question
from memdir.store import Store
from memdir.study import grade_answer, judge_answer
from memdir.study._config import JudgeSettings

from .helpers import ScriptedJudge


def _question() -> Question:
    return Question(id="ctx/q1", benchmark="personamem", conversation_id="ctx",
                    text="Which gift suits her now?", answer="(b)", category=1,
                    category_name="recall", options=["(a) a novel", "(b) a pottery kit"],
                    order=1)


async def test_multiple_choice_gets_attribution_but_no_correctness_judge(store: Store) -> None:
    store.create("/memories/hobbies.md", "---\nname: hobbies\ndescription: Hobbies\n---\n"
                 "She took up pottery in 2024 [B3M2].\n")
    question = _question()
    answer = "(b) [/memories/hobbies.md:L5]"
    judge = ScriptedJudge()
    graded = await judge_answer(grade_answer(question, answer), question, answer, store,
                                JudgeSettings(model="mock/judge"), judge.model(),
                                PriceTable.load())
    assert graded.option_correct is True and graded.judge_correct is None
    assert graded.attribution == {"citation_correctness": 1, "citation_relevance": 0.5,
                                  "aggregation": 1}
    assert (judge.correctness, judge.attribution) == (0, 1)
    assert graded.judge_usage is not None and graded.judge_usage.input == 300


async def test_without_a_store_multiple_choice_calls_no_judge() -> None:
    question = _question()
    judge = ScriptedJudge()
    graded = await judge_answer(grade_answer(question, "(a)"), question, "(a)", None,
                                JudgeSettings(model="mock/judge"), judge.model(),
                                PriceTable.load())
    assert graded.option_correct is False and graded.attribution is None
    assert (judge.correctness, judge.attribution) == (0, 0)
