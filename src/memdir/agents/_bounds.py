"""Intrinsic compute bounds of an episode and of a cell, from call records.

For an episode with model calls r = 1..R, let c_r be the input tokens of call
r (every token, cached or not), o_r its output tokens, and v_r = o_r minus its
reasoning tokens (the visible output that the appending history carries into
call r+1). The agent loop only ever appends, so call r's context is call r-1's
context plus v_{r-1} plus the new tool results and messages.

- ceiling = sum(c_r) + sum(o_r): every call prefills its whole context again.
- floor = sum(max(0, c_r - c_{r-1} - v_{r-1})) + sum(o_r), with c_0 = v_0 = 0:
  each unique context token is prefilled once (decoded tokens need no prefill),
  plus decode.
- measured = sum(uncached_r + cache_write_r) + sum(o_r): what was actually
  prefilled (cache reads are not recomputed), plus decode.
- realized = (ceiling - measured) / (ceiling - floor): the share of the
  achievable caching savings that the provider's cache delivered.

A call made after a compaction rewrote the history (``kept_prefix`` set on its
record) does not extend the previous call's context: only its first
``kept_prefix`` tokens were seen before, so it adds c_r - kept_prefix unique
tokens, and the calls after it extend it as before.

A cell's bounds are the sums over its episodes (no cache sharing is credited
across episodes), and its realized share is computed from those sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from memdir.agents._records import CallRecord, EpisodeRecord

__all__ = ["ComputeBounds", "cell_bounds", "episode_bounds"]


class ComputeBounds(BaseModel):
    """Token counts bracketing an episode's or a cell's computation."""

    model_config = ConfigDict(frozen=True)

    first_context: int = 0
    unique_prefill: int = 0
    decode: int = 0
    ceiling: int = 0
    floor: int = 0
    measured: int = 0

    @property
    def realized(self) -> float | None:
        """Share of achievable caching savings realized; None when nothing could be saved."""
        achievable = self.ceiling - self.floor
        if achievable <= 0:
            return None
        return (self.ceiling - self.measured) / achievable

    @property
    def overstatement(self) -> float | None:
        """How many times the no-cache ceiling exceeds the floor."""
        return self.ceiling / self.floor if self.floor else None

    def __add__(self, other: ComputeBounds) -> ComputeBounds:
        return ComputeBounds(
            first_context=self.first_context + other.first_context,
            unique_prefill=self.unique_prefill + other.unique_prefill,
            decode=self.decode + other.decode,
            ceiling=self.ceiling + other.ceiling,
            floor=self.floor + other.floor,
            measured=self.measured + other.measured,
        )


def episode_bounds(calls: EpisodeRecord | Sequence[CallRecord]) -> ComputeBounds:
    """The bounds of one episode (its calls in order)."""
    records = calls.calls if isinstance(calls, EpisodeRecord) else calls
    previous_context = 0
    previous_visible = 0
    unique = decode = ceiling = measured = 0
    for call in records:
        usage = call.usage
        context = usage.input
        if call.kept_prefix is not None:  # a compacted history: only its prefix was seen
            unique += max(0, context - call.kept_prefix)
        else:
            unique += max(0, context - previous_context - previous_visible)
        decode += usage.output
        ceiling += context + usage.output
        measured += usage.uncached_input + usage.cache_write + usage.output
        previous_context = context
        previous_visible = usage.output - usage.reasoning
    first = records[0].usage.input if records else 0
    return ComputeBounds(
        first_context=first,
        unique_prefill=unique,
        decode=decode,
        ceiling=ceiling,
        floor=unique + decode,
        measured=measured,
    )


def cell_bounds(episodes: Iterable[EpisodeRecord | Sequence[CallRecord]]) -> ComputeBounds:
    """The bounds of a cell: the sum over its episodes."""
    return sum((episode_bounds(e) for e in episodes), ComputeBounds())
