"""Every role runs through the same loop with its own prompt, tools and budget."""

from __future__ import annotations

import pytest

from memdir.agents import (
    AgentError,
    ask,
    load_prompt,
    render_cited,
    resolve_citations,
    role_config,
    run_agent,
)
from memdir.builders import FOLDERING_ROLE, REORGANIZER_ROLE
from memdir.skills._roles import CURATOR_ROLE, EXECUTION_ROLE, RETRIEVER_ROLE
from memdir.store import Store
from memdir.tools import make_toolset
from scripted import Script, calls, text, usage


def _fill(store: Store) -> None:
    store.create("/memories/people/ana.md",
                 "---\nname: ana\ndescription: Ana's hobbies and pets\n---\n# Ana\n\n"
                 "## Hobbies\n- Weaves since March 2024 [S2T1]\n- Earlier: pottery [S1T1]\n")
    store.create("/memories/session-01.md",
                 "---\nname: session-01\ndescription: Session 1, 2024-01-05, Ana and Ben\n---\n"
                 "[S1T1] Ana: I started a pottery class.\n[S1T2] Ben: I got a kitten.\n")


async def test_search_agent_answers_with_resolving_citations(store: Store) -> None:
    _fill(store)
    answer_text = ("Ana weaves [/memories/people/ana.md:L8] and used to do pottery "
                   "[/memories/people/ana.md > # Ana > ## Hobbies] [/memories/ghost.md]")
    script = Script([
        calls(("view", {"path": "/memories"}), ("grep", {"pattern": "weav", "ignore_case": True})),
        calls(("section_read", {"path": "/memories/people/ana.md", "heading_path": ["Hobbies"]})),
        text(answer_text, usage(500, 40, cached=300)),
    ])
    answer = await ask(store, "What does Ana do for fun?", script.model())
    script.assert_done()
    assert answer.model == "mockllm/model" and not answer.zero_cost_baseline
    assert [c.resolved for c in answer.citations] == [True, True, False]
    assert "Weaves since March 2024" in (answer.citations[0].content or "")
    assert "pottery" in (answer.citations[1].content or "")
    assert not answer.citations_resolve
    assert answer.records[0].prompt_name == "search-hierarchical"
    assert answer.usage.cached_input == 300 and answer.cost == 0.0
    shown = render_cited(answer.citations)
    assert "NOT FOUND" in shown and "Weaves since March 2024" in shown


@pytest.mark.parametrize("variant", ["foldered", "flat"])
async def test_verbatim_search_variants_use_their_prompt(store: Store, variant: str) -> None:
    _fill(store)
    script = Script([text("A kitten [/memories/session-01.md:L6]")])
    answer = await ask(store, "What pet did Ben get?", script.model(), variant=variant)  # type: ignore[arg-type]
    assert answer.records[0].prompt_name == f"search-{variant}"
    assert answer.citations_resolve and answer.citations[0].content == "[S1T2] Ben: I got a kitten."


async def test_chunk_variant_has_only_the_chunk_tool(store: Store) -> None:
    _fill(store)
    script = Script([calls(("bm25_chunk_retrieve", {"query": "kitten"})),
                     text("A kitten [/memories/session-01.md]")])
    answer = await ask(store, "What pet did Ben get?", script.model(), variant="chunk")
    script.assert_done()
    assert answer.records[0].toolset == "chunk"
    tool_result = script.seen[1][-1]
    assert "=== /memories/session-01.md ===" in tool_result.text


async def test_closed_book_runs_one_round_without_tools() -> None:
    script = Script([text("I cannot know; my guess is a cat.")])
    answer = await ask(None, "What pet did Ben get?", script.model(), variant="closed-book")
    rec = answer.records[0]
    assert rec.rounds == 1 and rec.toolset is None and answer.citations == []


async def test_multiple_choice_offline_picks_exactly_one_option(store: Store) -> None:
    _fill(store)
    answer = await ask(store, "What pet did Ben get? (a) a parrot (b) a kitten (c) a horse")
    assert answer.zero_cost_baseline
    options = [o for o in ("(a)", "(b)", "(c)") if o in answer.text]
    assert options == ["(b)"]


async def test_reorganizer_and_foldering(store: Store) -> None:
    _fill(store)
    before = store.read("/memories/session-01.md")
    fold = Script([
        calls(("view", {"path": "/memories"})),
        calls(("rename", {"old_path": "/memories/session-01.md",
                          "new_path": "/memories/pets/session-01.md"}),
              ("create", {"path": "/memories/x.md", "file_text": "nope"})),
        text("pets/: 1 file"),
    ])
    role = FOLDERING_ROLE
    run = await run_agent(fold.model(), role, load_prompt(role.prompt), "Sort the store.",
                          make_toolset(role.toolset or "", store))
    fold.assert_done()
    assert store.read("/memories/pets/session-01.md") == before
    assert run.record.calls[1].tool_calls[1].is_error  # no create in the folder set
    for prompt in ("reorganize-preserve", "reorganize-condense"):
        reorg = Script([calls(("view", {"path": "/memories"})), text("layout: people/")])
        role = REORGANIZER_ROLE.with_(prompt=prompt)
        run = await run_agent(reorg.model(), role, load_prompt(prompt), "Reorganize.",
                              make_toolset("write", store))
        assert run.record.prompt_name == prompt and run.record.max_rounds == 60


async def test_curator_retrievers_and_execution(store: Store) -> None:
    skill = ("---\nname: heat-an-object\ndescription: How to heat an object\nmetadata:\n"
             "  type: skill\n  sources:\n    - {task: t1, outcome: success}\n---\n1. Go.\n")
    cur = Script([calls(("create", {"path": "/memories/heat-an-object.md", "file_text": skill})),
                  text("Created the heat skill.")])
    role = CURATOR_ROLE
    await run_agent(cur.model(), role, load_prompt("curator"), "attempt t1: success",
                    make_toolset("write", store))
    assert store.exists("/memories/heat-an-object.md")
    assert "Only a successful attempt" in load_prompt("curator").text

    for prompt in ("retriever-cite", "retriever-guidance"):
        ret = Script([calls(("view", {"path": "/memories"})),
                      text("[/memories/heat-an-object.md] - heating task")])
        role = RETRIEVER_ROLE.with_(prompt=prompt)
        run = await run_agent(ret.model(), role, load_prompt(prompt),
                              load_prompt("turn-task", task="heat an egg").text,
                              make_toolset("read", store))
        assert resolve_citations(store, run.text)[0].resolved

    exe = Script([text("go to microwave 1")])
    role = EXECUTION_ROLE
    run = await run_agent(exe.model(), role, load_prompt("execution", task="heat an egg",
                                                         guidance="1. Go."), "You are in a room.")
    assert run.text == "go to microwave 1" and run.record.temperature == 0.0



async def test_a_looping_model_is_stopped_by_the_budget(store: Store) -> None:
    looping = Script([calls(("view", {"path": "/memories"})) for _ in range(5)]
                     + [text("gave up [/memories]")])
    answer = await ask(store, "q", looping.model(), role=role_config("search", max_rounds=5))
    looping.assert_done()
    assert answer.records[0].budget_exhausted and answer.records[0].rounds == 6


async def test_unknown_model_names_fail_clearly(store: Store) -> None:
    with pytest.raises(ValueError, match="provider/model"):
        await ask(store, "q", "gpt-5.4-mini")
    with pytest.raises(ValueError, match="not a memdir policy"):
        await ask(store, "q", "memdir/nope")
    assert AgentError.__mro__[1] is RuntimeError


async def test_offline_policy_with_nothing_to_search_for(store: Store) -> None:
    _fill(store)
    answer = await ask(store, "Who?")
    assert "Not found in memory" in answer.text and answer.records[0].rounds == 2
    empty = await ask(store, "What colour is the submarine?")
    assert "Not found in memory" in empty.text and empty.citations == []


async def test_the_offline_policy_says_what_it_searched_when_it_finds_nothing(
        store: Store) -> None:
    # Closed-book, the reader has no tools and reads nothing: its answer said "no line of
    # the store matches the question's terms, even after widening the search", a store it
    # never had and a second search it never ran (it never widens one).
    closed = await ask(None, "What colour is the submarine?", variant="closed-book")
    assert closed.records[0].toolset is None and closed.records[0].rounds == 1
    assert "no memory was searched" in closed.text
    assert "store" not in closed.text and "widen" not in closed.text
    _fill(store)
    grepped = await ask(store, "What colour is the submarine?")
    assert [c.name for c in grepped.records[0].calls[1].tool_calls] == ["grep"] * 2
    assert "no line of the store matches the question's terms." in grepped.text
    assert "widen" not in grepped.text
    none = await ask(store, "Who?")
    assert "no distinctive term" in none.text
    chunk = await ask(store, "What colour is the submarine?", variant="chunk")
    assert "no retrieved chunk matches" in chunk.text, chunk.text
