"""The LLM judge beside the grading: strict JSON replies, cited content shown, its defaults."""

from __future__ import annotations

import pytest

from memdir.agents import load_prompt, render_cited, resolve_citations, role_config, run_agent
from memdir.bench._cited import CITED_CHARS
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
    ok = Script([text('Sure: {"reasoning": "same pet", "correct": 1}')])
    grade = await judge_correctness(ok.model(), "Pet?", "a kitten", "A kitten")
    assert grade.correct == 1 and grade.record.role == "judge" and grade.reason == "same pet"
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


async def test_attribution_sees_each_cited_file_whole_when_it_fits(store: Store) -> None:
    body = "".join(f"line {i}: filler about the garden\n" for i in range(1, 40))
    store.create("/memories/garden.md",
                 "---\nname: garden\ndescription: The garden\n---\n# Garden\n## Roses\n"
                 "Ana planted roses in May.\n## Beds\n" + body)
    cited = resolve_citations(store, "[/memories/garden.md:L7] [/memories/garden.md > # Garden "
                                     "> ## Roses] [/memories/nope.md] [/memories/garden.md]")
    view = judged_view(store, cited)
    # The line citation shows the whole file with the cited line marked, beyond the lines cited.
    assert "[/memories/garden.md:L7] (the whole file, the cited lines marked >>)" in view
    assert ">>     7  Ana planted roses in May." in view
    assert "       8  ## Beds" in view and "line 39: filler about the garden" in view
    # A section citation marks the lines its heading spans, in the same numbered file.
    section = view.split("[/memories/garden.md > # Garden > ## Roses]")[1]
    assert section.startswith(" (the whole file, the cited section's lines marked >>)")
    assert ">>     6  ## Roses\n>>     7  Ana planted roses in May.\n       8  ## Beds" in section
    assert "NOT FOUND" in view
    assert "[/memories/garden.md] (the whole file)\n       1  ---" in view
    judge = Script([text('{"reasoning": "the line says so", "citation_correctness": 1, '
                         '"citation_relevance": 1, "aggregation": 1}')])
    grade = await judge_attribution(judge.model(), store, "Roses?",
                                    "In May [/memories/garden.md:L7]")
    assert "line 39: filler" in judge.seen[0][0].text  # the judge got the whole file
    assert grade.reason == "the line says so"


def _long_store(store: Store) -> str:
    """A 45 KB file whose line 606 holds the one fact an answer cites."""
    # file lines 1-4 are the frontmatter; line n of the file reads "entry n"
    lines = [f"- entry {n}: the weather that week was mild and nothing else happened"
             for n in range(5, 700)]
    lines[606 - 5] = "- entry 606: Ana moved to Lisbon on 2023-03-04"
    store.create("/memories/log.md", "---\nname: log\ndescription: A long log\n---\n"
                 + "\n".join(lines) + "\n")
    text = store.read("/memories/log.md")
    assert text.split("\n")[605] == "- entry 606: Ana moved to Lisbon on 2023-03-04"
    assert len(text) > 45_000
    return text


def test_a_citation_deep_in_a_long_file_shows_a_window_around_its_lines(store: Store) -> None:
    text = _long_store(store)
    cited = resolve_citations(store, "[/memories/log.md:L606]")
    view = judged_view(store, cited)
    assert ">>   606  - entry 606: Ana moved to Lisbon on 2023-03-04" in view
    assert len(view) <= CITED_CHARS + 300
    heading = view.split("\n")[0]
    first, last = (int(n) for n in heading.split("(lines ")[1].split(" of")[0].split("-"))
    total = len(text.rstrip("\n").split("\n"))
    assert heading.endswith(f"of {total}, the cited lines marked >> with the lines around "
                            "them; the rest of the file is not shown)")
    assert first < 606 < last  # context on both sides, about as much above as below
    assert abs((606 - first) - (last - 606)) <= 1
    assert f"  {first:>5}  " in view and f"  {last:>5}  " in view
    assert f"  {first - 1:>5}  " not in view and f"  {last + 1:>5}  " not in view


def test_cited_lines_longer_than_the_budget_are_cut_with_a_mark(store: Store) -> None:
    _long_store(store)
    whole = judged_view(store, resolve_citations(store, "[/memories/log.md]"), cap=2_000)
    assert whole.split("\n")[0].startswith("[/memories/log.md] (lines 1-")
    assert "the file is cited whole and is too long to show" in whole
    span = judged_view(store, resolve_citations(store, "[/memories/log.md:L600-690]"),
                       cap=2_000)
    assert span.split("\n")[1].startswith(">>   600  ")  # the cited lines from their start
    assert "the cited lines run 600-690, too long to show whole" in span
    assert len(span) < 2_400
