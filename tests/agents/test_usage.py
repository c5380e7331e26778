"""Usage categories, and the mapping from inspect_ai's ModelUsage per provider.

The provider cases run inspect_ai's own converters on SDK response objects, so a
change in how inspect_ai reports cached tokens shows up here.
"""

from __future__ import annotations

import pytest
from inspect_ai.model import ModelUsage

from memdir.agents import Usage, usage_from_inspect


def test_usage_adds_and_counts_every_input_token() -> None:
    a = Usage(uncached_input=100, cached_input=900, cache_write=10, output=50, reasoning=20)
    b = Usage(uncached_input=1, cached_input=2, cache_write=3, output=4, reasoning=1)
    total = a + b
    assert total == Usage(uncached_input=101, cached_input=902, cache_write=13, output=54,
                          reasoning=21)
    assert total.input == 101 + 902 + 13 and total.total == total.input + 54
    assert sum([a, b]) == total


def test_no_report_is_one_call_of_unknown_usage() -> None:
    unknown = usage_from_inspect(None)
    assert unknown == Usage(unreported=1) and not unknown.known and unknown.total == 0
    assert not (unknown + Usage(output=5)).known and Usage().known


def test_normalised_convention_is_trusted() -> None:
    mu = ModelUsage(input_tokens=200, output_tokens=30, input_tokens_cache_read=800,
                    input_tokens_cache_write=100, reasoning_tokens=12, total_tokens=1130)
    assert usage_from_inspect(mu) == Usage(uncached_input=200, cached_input=800, cache_write=100,
                                           output=30, reasoning=12)


def test_cached_inside_input_is_taken_out() -> None:
    # A provider that left the cached part inside input_tokens: total = input + output.
    mu = ModelUsage(input_tokens=1000, output_tokens=50, input_tokens_cache_read=800,
                    total_tokens=1050)
    u = usage_from_inspect(mu)
    assert (u.uncached_input, u.cached_input, u.input) == (200, 800, 1000)


def test_openai_chat_completions_cached_tokens_are_a_subset() -> None:
    from inspect_ai.model._openai import model_output_from_openai
    from openai.types.chat import ChatCompletion
    from openai.types.completion_usage import (
        CompletionTokensDetails,
        CompletionUsage,
        PromptTokensDetails,
    )

    completion = ChatCompletion(
        id="r1", created=0, model="gpt-5.4-mini", object="chat.completion", choices=[],
        usage=CompletionUsage(
            prompt_tokens=1000, completion_tokens=50, total_tokens=1050,
            prompt_tokens_details=PromptTokensDetails(cached_tokens=800),
            completion_tokens_details=CompletionTokensDetails(reasoning_tokens=30),
        ),
    )
    u = usage_from_inspect(model_output_from_openai(completion, []).usage)
    # OpenAI's prompt_tokens (1000) already includes the 800 cached tokens.
    assert u == Usage(uncached_input=200, cached_input=800, output=50, reasoning=30)
    assert u.input == 1000


def test_openai_responses_usage() -> None:
    from inspect_ai.model._openai_responses import model_usage_from_response_usage
    from openai.types.responses import ResponseUsage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    ru = ResponseUsage(
        input_tokens=1000, output_tokens=40, total_tokens=1040,
        input_tokens_details=InputTokensDetails(cached_tokens=900, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=25),
    )
    u = usage_from_inspect(model_usage_from_response_usage(ru))
    assert u == Usage(uncached_input=100, cached_input=900, output=40, reasoning=25)


async def test_anthropic_input_excludes_cache_reads_and_writes() -> None:
    pytest.importorskip("anthropic")
    from anthropic.types import Message, TextBlock
    from anthropic.types import Usage as AnthropicUsage
    from inspect_ai.model._providers.anthropic import model_output_from_message

    message = Message(
        id="m1", type="message", role="assistant", model="claude-sonnet-4-5",
        content=[TextBlock(type="text", text="hi")], stop_reason="end_turn",
        usage=AnthropicUsage(input_tokens=200, output_tokens=20, cache_read_input_tokens=800,
                             cache_creation_input_tokens=100),
    )
    output = await model_output_from_message(None, "claude-sonnet-4-5", message, [])
    if isinstance(output, tuple):
        output = output[0]
    u = usage_from_inspect(output.usage)
    # Anthropic's input_tokens (200) never included the cached 800 or the 100 written.
    assert u == Usage(uncached_input=200, cached_input=800, cache_write=100, output=20)
    assert u.input == 1100
