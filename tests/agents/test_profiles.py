"""Provider profiles: one table decides caching, effort, the summary probe and offline-ness."""

from __future__ import annotations

import pytest

from memdir.agents import (
    OFFLINE_MODEL,
    PROFILES,
    ask,
    is_offline,
    is_policy,
    profile,
    role_config,
)
from memdir.store import Store
from memdir.study import Cell
from memdir.study._estimate import reference_range
from scripted import Script, text

SEARCH = role_config("search")


@pytest.mark.parametrize(
    ("model", "effort", "cache", "summary"),
    [
        ("openai/gpt-5.4-mini", "high", None, "none"),
        ("openai/o3", "high", None, "none"),
        ("openai/gpt-4.1", None, None, "none"),
        ("anthropic/claude-sonnet-4-5", "high", True, None),
        ("google/gemini-2.5-pro", "high", None, None),
        ("openai-api/vllm/qwen3", None, None, None),
        ("together/some-model", None, None, None),  # not in the table: the default profile
        ("mockllm/model", None, None, None),
    ],
)
def test_generation_settings_follow_the_provider_profile(
    model: str, effort: str | None, cache: bool | None, summary: str | None
) -> None:
    config = SEARCH.generate_config(model)
    assert (config.reasoning_effort, config.cache_prompt, config.reasoning_summary) == (
        effort, cache, summary)
    assert config.max_tokens == SEARCH.max_tokens


def test_offline_models_are_declared_once() -> None:
    offline = {name for name, found in PROFILES.items() if found.offline}
    assert offline == {"memdir", "mockllm"}
    assert is_offline(OFFLINE_MODEL) and is_policy(OFFLINE_MODEL)
    assert is_offline("mockllm/model") and not is_policy("mockllm/model")
    assert not is_offline("openai/gpt-5.4-mini") and profile("nope/x") == profile("nope/y")


def _cell(model: str) -> Cell:
    return Cell(benchmark="locomo", tier=None, conversation="conv-26", variant="verbatim",
                builder_model=None, search_model=model, harness="center")


async def test_every_consumer_reads_the_same_declaration(store: Store) -> None:
    # The estimate prices nothing for an offline searcher and something for a paid one.
    assert reference_range(_cell("mockllm/model")) == (0.0, 0.0)
    assert reference_range(_cell(OFFLINE_MODEL)) == (0.0, 0.0)
    assert reference_range(_cell("openai/gpt-5.4-mini")) != (0.0, 0.0)
    # The loop marks only a memdir policy as the zero-cost baseline.
    store.create("/memories/a.md", "---\nname: a\ndescription: A\n---\nalpha\n")
    assert (await ask(store, "alpha?")).zero_cost_baseline
    scripted = await ask(store, "alpha?", Script([text("alpha [/memories/a.md]")]).model())
    assert not scripted.zero_cost_baseline
