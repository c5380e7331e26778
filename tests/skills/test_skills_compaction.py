"""The execution agent compacts a long episode, and its token accounting stays exact.

A scripted model (inspect_ai's mockllm, each reply with an explicit usage) plays
nine steps whose reported context grows past the threshold twice. The test checks
what the model was sent at every call (appended turns, then the compacted
history), the note that stands for the folded steps, the recorded usage (the sum
of what the script reported, nothing added or lost) and the compute bounds on
hand-computed figures.
"""

from __future__ import annotations

import pytest

from memdir.agents import episode_bounds
from memdir.skills import Compaction, ModelPolicy
from memdir.skills._policy import Step
from scripted import Script, text, usage

STEPS = 9
INPUTS = [1000, 1500, 2000, 2500, 3000, 1800, 2300, 2800, 2000]
"""The context each call reports: it grows, crosses 2,600 (with the reply) at calls 5 and 8,
and shrinks at the calls after each compaction (6 and 9)."""
OUTPUT = 50
POLICY = Compaction(at_tokens=2600, keep_steps=2, observation_chars=30)


def _reply(step: int) -> str:
    return f"<think>step {step} reasoning</think><action>go to shelf {step}</action>"


def _observation(step: int) -> str:
    return f"You arrive at shelf {step - 1}. On it you see a mug {step} and a very long list."


async def _play(compaction: Compaction | None) -> tuple[Script, ModelPolicy]:
    script = Script([text(_reply(i), usage(INPUTS[i - 1], OUTPUT)) for i in range(1, STEPS + 1)])
    policy = ModelPolicy(script.model(), compaction=compaction)
    policy.begin("put a mug on the shelf", "Look on shelves first.")
    history: list[Step] = []
    for step in range(1, STEPS + 1):
        observation = _observation(step)
        action = await policy.act(observation, ["go to shelf 1", "look"], history)
        assert action == f"go to shelf {step}"
        history.append(Step(action=action, observation=observation))
    script.assert_done()
    return script, policy


def _texts(messages: list[object]) -> list[tuple[str, str]]:
    return [(str(getattr(m, "role", "")), str(getattr(m, "text", ""))) for m in messages]


async def test_a_long_episode_is_compacted_after_the_threshold() -> None:
    script, policy = await _play(POLICY)
    sent = [_texts(call) for call in script.seen]
    # Calls 1-5 append: system, then one turn and one reply per step.
    for call in range(5):
        assert len(sent[call]) == 2 + 2 * call
    # Call 6 (after call 5 reached 3,050): system, step 1's turn, the note for steps 1-3,
    # then steps 4 and 5 in full and step 6's turn.
    roles = [role for role, _ in sent[5]]
    assert roles == ["system", "user", "user", "user", "assistant", "user", "assistant", "user"]
    assert sent[5][:2] == sent[0][:2]  # the kept prefix is byte for byte the first call's
    note = sent[5][2][1]
    assert note.startswith("(Steps 1 to 3 of this episode are shortened here")
    # each folded step: its action, then what followed it cut to 30 characters; the last
    # folded step's result is step 4's turn, kept in full
    assert "- step 1: go to shelf 1 -> You arrive at shelf 1. On it y ..." in note
    assert note.rstrip().endswith("- step 3: go to shelf 3")
    assert "step 1 reasoning" not in note  # the folded replies' reasoning is dropped
    assert sent[5][3] == sent[4][-3] and sent[5][5] == sent[4][-1]  # steps 4, 5 unchanged
    assert sent[5][4][1] == _reply(4) and sent[5][6][1] == _reply(5)
    # Calls 7 and 8 append to the compacted history; call 9 compacts again (steps 1-6).
    assert len(sent[6]) == len(sent[5]) + 2 and len(sent[7]) == len(sent[6]) + 2
    assert "(Steps 1 to 6 of this episode" in sent[8][2][1] and len(sent[8]) == 8
    assert [r for r, _ in sent[8]] == roles


async def test_token_accounting_stays_exact_across_a_compaction() -> None:
    _, policy = await _play(POLICY)
    record = policy.take_record()
    assert record is not None and record.rounds == STEPS
    assert record.usage.input == sum(INPUTS) and record.usage.output == OUTPUT * STEPS
    # The calls after a compaction record the part of their context seen before.
    assert [c.kept_prefix for c in record.calls] == [None] * 5 + [1000, None, None, 1000]
    bounds = episode_bounds(record)
    # unique prefill: call 1 whole; appending calls add c_r - c_(r-1) - 50; a call after a
    # compaction adds everything past the kept 1,000 tokens
    unique = 1000 + 4 * 450 + (1800 - 1000) + 450 + 450 + (2000 - 1000)
    assert bounds.unique_prefill == unique
    assert bounds.floor == unique + OUTPUT * STEPS
    assert bounds.ceiling == sum(INPUTS) + OUTPUT * STEPS
    assert bounds.measured == sum(INPUTS) + OUTPUT * STEPS  # the script reported no cache


async def test_without_compaction_the_episode_only_appends() -> None:
    script, policy = await _play(None)
    assert [len(call) for call in script.seen] == [2 + 2 * i for i in range(STEPS)]
    record = policy.take_record()
    assert record is not None and all(c.kept_prefix is None for c in record.calls)


@pytest.mark.parametrize("keep", [0, 8])
async def test_nothing_is_folded_that_is_not_older_than_the_kept_steps(keep: int) -> None:
    script, _ = await _play(Compaction(at_tokens=2600, keep_steps=keep))
    if keep == 8:  # never more than 8 replied steps before call 9: nothing to fold
        assert [len(call) for call in script.seen] == [2 + 2 * i for i in range(STEPS)]
    else:
        assert [r for r, _ in _texts(script.seen[5])] == ["system", "user", "user", "user"]
