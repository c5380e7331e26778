"""The Gold-Standard retriever (curated_skills_mem_gs): guidance served word for word.

Its reply is all the execution agent gets: the guidance with its provenance
lines, the fixed no-experience line when nothing applies (served as it is,
citing nothing), and nothing at all when the reply is only citations (paths the
agent cannot open). Its user turn carries the fixed instruction line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.model import get_model
from test_skills_gate import TASK, entry

from memdir.agents import load_prompt
from memdir.skills import NO_EXPERIENCE, AlfworldTask, make_variant
from memdir.skills._variants import variant_inputs
from memdir.store import Store
from scripted import Script, text, usage

U = usage(100, 10)
EGG = AlfworldTask(task_id=TASK, family="heat", goal="heat some egg and put it in fridge.",
                   game_file=Path("x"))


async def _serve(store: Store, reply: str) -> tuple[object, Script]:
    store.create("/memories/heat.md", entry("heat", "skill", "success",
                                            body="# Steps\n1. heat egg 1 with microwave 1\n"))
    script = Script([text(reply, U)])
    model = get_model("mockllm/model", custom_outputs=script)
    variant = make_variant("curated_skills_mem_gs", store, curator=model, retriever=model)
    return await variant.retrieve(1, EGG), script


async def test_guidance_is_served_word_for_word_with_its_provenance(store: Store) -> None:
    reply = ("Heat the egg with the microwave (`heat egg 1 with microwave 1`), then put it in "
             "the fridge.\n[/memories/heat.md]")
    served, script = await _serve(store, reply)
    assert served.guidance == reply and served.paths == ["/memories/heat.md"]
    system, user = script.seen[0][0].text, script.seen[0][1].text
    assert system == load_prompt("retriever-guidance").text
    assert user == load_prompt("turn-task-guidance", task=EGG.goal).text
    assert user.startswith("Using the skills and notes in the library, write the guidance")


async def test_the_fixed_fallback_line_is_served_as_it_is(store: Store) -> None:
    served, _ = await _serve(store, NO_EXPERIENCE)
    assert served.guidance == NO_EXPERIENCE and served.paths == []
    assert NO_EXPERIENCE in load_prompt("retriever-guidance").text


@pytest.mark.parametrize("reply", [
    "[/memories/heat.md]",
    "Source: [/memories/heat.md]",
    "- [/memories/heat.md] - how to heat an egg",
])
async def test_a_reply_of_citations_alone_serves_nothing(store: Store, reply: str) -> None:
    served, _ = await _serve(store, reply)
    assert served.guidance == "" and served.paths == [] and served.record is not None


def test_the_run_pins_the_guidance_turn() -> None:
    prompts, _ = variant_inputs("curated_skills_mem_gs", "center+bm25")
    assert prompts == ["retriever-guidance@center+bm25", "turn-task-guidance",
                       "curator@center+bm25"]
    assert variant_inputs("curated_skills_mem")[0][1] == "turn-task"
