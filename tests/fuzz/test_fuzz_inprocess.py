"""No malformed call raises or overruns its time or memory: every tool set, the adapter.

Each tool set of the registry (:data:`memdir.tools.TOOLSET_NAMES`) gets calls
generated from its own tools' schemas (:func:`fuzzcalls.calls_for`), and the
Anthropic memory tool adapter gets ``input`` objects shaped by the SDK's
``BetaMemoryTool20250818*`` commands, under both profiles.
"""

from __future__ import annotations

import asyncio

import pytest
from fuzzcalls import Call, adapter_inputs, calls_for
from fuzzrun import FUZZ, adapter_surface, known_paths, problems, toolset_surface
from hypothesis import given

from memdir.store import Store
from memdir.tools import TOOLSET_NAMES, SandboxUnavailableError


@pytest.mark.parametrize("name", TOOLSET_NAMES)
def test_no_tool_call_raises(name: str, fuzz_store: Store, runner: asyncio.Runner) -> None:
    try:
        surface, toolset = toolset_surface(name, fuzz_store, runner)
    except SandboxUnavailableError as exc:
        pytest.skip(f"the {name} set needs a confinement: {exc}")
    paths = known_paths(fuzz_store.root)

    @FUZZ
    @given(call=calls_for(toolset, paths))
    def check(call: Call) -> None:
        outcome = surface.send(call)
        assert not problems(outcome), (call, problems(outcome))

    check()
    assert surface.tally.calls >= FUZZ.max_examples


@pytest.mark.parametrize("profile", ["anthropic", "memdir"])
def test_no_adapter_block_raises(profile: str, fuzz_store: Store,
                                 runner: asyncio.Runner) -> None:
    surface = adapter_surface(profile, fuzz_store, runner)
    paths = known_paths(fuzz_store.root)

    @FUZZ
    @given(data=adapter_inputs(paths))
    def check(data: object) -> None:
        outcome = surface.send(Call("memory", data, "mapping"))
        assert not problems(outcome), (data, problems(outcome))

    check()
    assert surface.tally.calls >= FUZZ.max_examples
