"""Token usage in the study's categories, and its mapping from inspect_ai.

Every input token is counted, whether or not the provider served it from its
prompt cache: ``uncached_input + cached_input + cache_write`` is the whole
context the call read. Reasoning tokens are a sub-count of ``output``.

inspect_ai (0.3.100 and later) normalises every provider to one convention:
``ModelUsage.input_tokens`` excludes the tokens reported in
``input_tokens_cache_read`` and ``input_tokens_cache_write``. Its OpenAI
converters subtract the cached part from OpenAI's ``prompt_tokens`` (in which
the cached tokens are a subset); Anthropic reports ``input_tokens`` without
cache reads and writes already. :func:`usage_from_inspect` trusts that
convention, and checks it against ``total_tokens``: a provider that instead
left the cached tokens inside ``input_tokens`` shows as
``total_tokens == input_tokens + output_tokens`` with a non-zero cache count,
and the cached part is then taken out of ``input_tokens`` so nothing is counted
twice. That guard only runs for providers not known to follow the convention:
for the ones whose converters do (the ``usage_normalised`` profiles: OpenAI,
OpenAI-compatible servers, Anthropic, Google, Bedrock), a provider total that
simply leaves the cache out would otherwise make it take the cached part out a
second time. A call whose provider reported no usage at all is counted in
``unreported``: its tokens and cost are unknown, never zero.
"""

from __future__ import annotations

from inspect_ai.model import ModelUsage
from pydantic import BaseModel, ConfigDict, Field

from memdir.agents._profiles import profile

__all__ = ["Usage", "usage_from_inspect"]


class Usage(BaseModel):
    """Tokens of one or more model calls, by billing category."""

    model_config = ConfigDict(frozen=True)

    uncached_input: int = Field(default=0, ge=0, description="Input prefilled at full rate.")
    cached_input: int = Field(default=0, ge=0, description="Input served from the prompt cache.")
    cache_write: int = Field(default=0, ge=0, description="Input written to the prompt cache.")
    output: int = Field(default=0, ge=0, description="Generated tokens, reasoning included.")
    reasoning: int = Field(default=0, ge=0, description="Reasoning tokens (part of output).")
    unreported: int = Field(
        default=0, ge=0,
        description="Calls whose provider reported no usage: their tokens, and so the cost, "
        "are unknown (not zero).",
    )

    @property
    def known(self) -> bool:
        """Every call reported its usage, so the counts (and a cost) are complete."""
        return self.unreported == 0

    @property
    def input(self) -> int:
        """Every input token of the call(s), cached or not."""
        return self.uncached_input + self.cached_input + self.cache_write

    @property
    def total(self) -> int:
        """Input plus output."""
        return self.input + self.output

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            uncached_input=self.uncached_input + other.uncached_input,
            cached_input=self.cached_input + other.cached_input,
            cache_write=self.cache_write + other.cache_write,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
            unreported=self.unreported + other.unreported,
        )

    def __radd__(self, other: object) -> Usage:
        # Lets ``sum(usages)`` start from 0.
        if other == 0:
            return self
        return NotImplemented


def usage_from_inspect(usage: ModelUsage | None, model: str | None = None) -> Usage:
    """Map inspect_ai's :class:`~inspect_ai.model.ModelUsage` onto :class:`Usage`.

    Args:
        usage: What the provider reported; None (no report) is one call of unknown usage.
        model: ``provider/model``; for a provider whose inspect_ai converter is known
            to take the cached part out of ``input_tokens`` (see the profiles), the
            total-tokens guard is skipped, so cached tokens are never taken out twice.
    """
    if usage is None:
        return Usage(unreported=1)
    read = usage.input_tokens_cache_read or 0
    write = usage.input_tokens_cache_write or 0
    uncached = usage.input_tokens
    normalised = model is not None and profile(model).usage_normalised
    cached_inside = (
        not normalised
        and (read or write)
        and usage.total_tokens == usage.input_tokens + usage.output_tokens
        and usage.input_tokens >= read + write
    )
    if cached_inside:
        uncached -= read + write
    reasoning = min(usage.reasoning_tokens or 0, usage.output_tokens)
    return Usage(
        uncached_input=max(uncached, 0),
        cached_input=read,
        cache_write=write,
        output=usage.output_tokens,
        reasoning=reasoning,
    )
