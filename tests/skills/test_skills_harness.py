"""The skill setting's harness axis: the curator and the retriever use the harness's tool sets.

Center writes with ``write`` and reads with ``read``; Center+BM25 adds ranked
``search`` on both sides; Shell gives the curator ``bash`` (gated after each
command for the gated variants: test_skills_shell_gate.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.model import get_model
from test_skills_gate import TASK, entry, failed_attempt

from memdir.skills import AlfworldTask, Cell, RunConfig, Served, make_variant
from memdir.store import Store
from scripted import Script, calls, text, usage

U = usage(150, 10)


def test_harnesses_make_cells_for_the_variants_that_read_or_write_a_store(
        tmp_path: Path) -> None:
    config = RunConfig(name="h", output=tmp_path, harnesses=["center", "center+bm25", "shell"],
                       variants=["none", "episode_log_recent", "episode_log", "curated_skills"])
    keys = [c.key for c in config.cells()]
    assert keys == ["full-chain.none.exec-expert",
                    "full-chain.episode_log_recent.exec-expert",
                    "full-chain.episode_log.exec-expert",
                    "full-chain.episode_log.exec-expert.h-center-bm25",
                    "full-chain.episode_log.exec-expert.h-shell",
                    "full-chain.curated_skills.cur-gpt-5_4-mini.exec-expert",
                    "full-chain.curated_skills.cur-gpt-5_4-mini.exec-expert.h-center-bm25",
                    "full-chain.curated_skills.cur-gpt-5_4-mini.exec-expert.h-shell"]
    shell = next(c for c in config.cells() if c.key.endswith("curated_skills.cur-gpt-5_4-mini"
                                                             ".exec-expert.h-shell"))
    prompts, toolsets = shell.inputs()
    assert toolsets[0] == "shell-read"
    assert prompts[:3] == ["retriever-cite-broad@shell", "turn-task", "curator-skills@shell"]
    # a cell recorded before harnesses existed loads as center, under its old key
    old = Cell.model_validate({"protocol": "full-chain", "variant": "episode_log",
                               "execution": "expert", "retriever": "openai/gpt-5.4-mini"})
    assert old.harness == "center" and old.key == "full-chain.episode_log.exec-expert"
    with pytest.raises(ValueError, match="unknown harness"):
        RunConfig(name="h", output=tmp_path, variants=["none"], harnesses=["emacs"])


async def test_under_center_bm25_both_roles_get_ranked_search(store: Store) -> None:
    store.create("/memories/eggs.md", entry("eggs", "note", "success", body="# Eggs\nFridge\n"))
    retriever = Script([calls(("search", {"query": "eggs fridge"}), u=U),
                        text("[/memories/eggs.md] - eggs", U)])
    curator = Script([calls(("search", {"query": "eggs fridge"}), u=U),
                      calls(("create", {"path": "/memories/egg-warning.md",
                                        "file_text": entry("egg-warning", "note", "failure")}),
                            u=U),
                      text("Noted the failure.", U)])
    variant = make_variant("curated_skills_mem", store, harness="center+bm25",
                           curator=get_model("mockllm/model", custom_outputs=curator),
                           retriever=get_model("mockllm/model", custom_outputs=retriever))
    task = AlfworldTask(task_id=TASK, family="heat", goal="heat some egg.", game_file=Path("x"))
    served = await variant.retrieve(0, task)
    assert served.paths == ["/memories/eggs.md"]
    assert served.record is not None and served.record.toolset == "bm25"
    assert "eggs.md" in str(retriever.seen[1][-1].text)  # the search tool answered
    done = await variant.integrate(0, failed_attempt(), served)
    assert done.record is not None and done.record.toolset == "skills-bm25-write"
    assert done.record.prompt_name == "curator@center+bm25"
    assert served.record.prompt_name == "retriever-cite@center+bm25"
    assert done.refusals == [] and store.exists("/memories/egg-warning.md")
    retriever.assert_done()
    curator.assert_done()


async def test_the_center_cell_keeps_its_tools(store: Store) -> None:
    script = Script([text("Nothing to learn.", U)])
    model = get_model("mockllm/model", custom_outputs=script)
    variant = make_variant("curated_skills_mem", store, curator=model, retriever=model)
    done = await variant.integrate(0, failed_attempt(), Served())
    assert done.record is not None and done.record.toolset == "skills-write"
