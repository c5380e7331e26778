"""The LLM judge beside the grading: strict JSON replies, cited content shown, its defaults."""

from __future__ import annotations

import pytest

from memdir.agents import load_prompt, render_cited, resolve_citations, role_config, run_agent
from memdir.bench.judge import (
    JUDGE_ROLE,
    JudgeError,
    judge_attribution,
    judge_correctness,
    judge_role,
    judged_view,
)
from memdir.store import Store
from scripted import Script, text


def _fill(store: Store) -> None:
    store.create("/memories/session-01.md",
                 "---\nname: session-01\ndescription: Session 1, 2024-01-05, Ana and Ben\n---\n"
                 "[S1T1] Ana: I started a pottery class.\n[S1T2] Ben: I got a kitten.\n")


async def test_judges_parse_strict_json_and_see_cited_content(store: Store) -> None:
    _fill(store)
    ok = Script([text('Sure: {"correct": 1, "reason": "same pet"}')])
    grade = await judge_correctness(ok.model(), "Pet?", "a kitten", "A kitten")
    assert grade.correct == 1 and grade.record.role == "judge"
    seen = Script([text('{"citation_correctness": 0.5, "citation_relevance": 1, '
                        '"aggregation": 1, "reason": "one citation is missing"}')])
    answer = "A kitten [/memories/session-01.md:L6] [/memories/gone.md]"
    att = await judge_attribution(seen.model(), store, "Pet?", answer)
    assert (att.citation_correctness, att.citation_relevance, att.aggregation) == (0.5, 1, 1)
    system = seen.seen[0][0].text
    assert "[S1T2] Ben: I got a kitten." in system and "NOT FOUND" in system
    bad = Script([text('{"citation_correctness": 0.7, "citation_relevance": 1, '
                       '"aggregation": 1}')])
    with pytest.raises(JudgeError, match="0, 0.5 or 1"):
        await judge_attribution(bad.model(), store, "Pet?", answer)
    with pytest.raises(JudgeError, match="without a JSON"):
        await judge_correctness(Script([text("yes")]).model(), "q", "g", "a")



async def test_the_judge_role_is_one_tool_free_call_at_low_effort(store: Store) -> None:
    assert (JUDGE_ROLE.max_rounds, JUDGE_ROLE.toolset, JUDGE_ROLE.max_tokens) == (1, None, 2048)
    assert JUDGE_ROLE.reasoning_effort == "low" and JUDGE_ROLE.temperature == 0.0
    assert judge_role(prompt="judge-attribution").prompt == "judge-attribution"
    with pytest.raises(ValueError, match="unknown role 'judge'"):
        role_config("judge")  # the agents' table no longer holds it
    store.create("/memories/heat.md", "---\nname: heat\ndescription: Heat\n---\n1. Go.\n")
    cited = render_cited(resolve_citations(store, "[/memories/heat.md:L5]"))
    prompt = load_prompt("judge-attribution", question="q", answer="a", cited=cited)
    assert "1. Go." in prompt.text
    jc = Script([text('{"correct": 1, "reason": "same"}')])
    run = await run_agent(jc.model(), judge_role(),
                          load_prompt("judge-correctness", question="q", gold="g", answer="a"),
                          "Grade it.")
    assert run.record.rounds == 1 and run.record.reasoning_effort is None  # mockllm takes none


async def test_attribution_sees_each_cited_file_or_section_whole(store: Store) -> None:
    body = "".join(f"line {i}: filler about the garden\n" for i in range(1, 40))
    store.create("/memories/garden.md",
                 "---\nname: garden\ndescription: The garden\n---\n# Garden\n## Roses\n"
                 "Ana planted roses in May.\n## Beds\n" + body)
    cited = resolve_citations(store, "[/memories/garden.md:L7] [/memories/garden.md > # Garden "
                                     "> ## Roses] [/memories/nope.md]")
    view = judged_view(store, cited)
    # The line citation shows the whole file with the cited line marked, beyond the lines cited.
    assert ">>     7  Ana planted roses in May." in view
    assert "line 39: filler about the garden" in view
    assert "(the whole section)\n## Roses\nAna planted roses in May." in view
    assert "NOT FOUND" in view
    short = judged_view(store, cited[:1], cap=200)
    assert "[... cut here:" in short and "more characters of this citation are not shown" in short
    assert len(short) < 400
    judge = Script([text('{"citation_correctness": 1, "citation_relevance": 1, '
                         '"aggregation": 1}')])
    await judge_attribution(judge.model(), store, "Roses?", "In May [/memories/garden.md:L7]")
    assert "line 39: filler" in judge.seen[0][0].text  # the judge got the whole file
