"""Retrieval diagnostics: did the search agent see the evidence, and did it cite it?

A store does not change while it is searched and the read tools are pure, so
replaying an episode's tool calls against the same store gives back exactly the
text the agent saw. An evidence locator (``S5T3``) counts as *seen* when it
appears in any such tool result, and as *cited* when it appears in the text a
resolved citation of the answer points at. A wrong answer whose evidence was never
seen was a search failure; one whose evidence was seen was a reading failure.
Shell commands are not replayed (they may have side effects), so under the shell
harness only the citations count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memdir.agents import Citation, EpisodeRecord
from memdir.study._records import ReadSpan
from memdir.tools import ToolSet

__all__ = ["LOCATOR_IN_TEXT", "NOT_REPLAYED", "cited_locators", "replay_reads"]

LOCATOR_IN_TEXT = re.compile(r"\b(S\d+T\d+|B\d+M\d+)\b")
NOT_REPLAYED = frozenset({"bash"})
"""Tools whose calls are not replayed: a shell command may have side effects."""
_STORE_PATH = re.compile(r"/memories/[^\s\]\)>:'\"]+\.md")


def _span(name: str, args: dict[str, object], content: str) -> list[ReadSpan]:
    path = str(args.get("path", ""))
    if name == "view":
        rng = args.get("view_range")
        if isinstance(rng, list) and len(rng) == 2:
            return [ReadSpan(tool=name, path=path, start=int(rng[0]), end=int(rng[1]))]
        return [ReadSpan(tool=name, path=path)]
    if name in ("section_read", "toc", "grep"):
        return [ReadSpan(tool=name, path=path or "/memories")]
    return [ReadSpan(tool=name, path=p) for p in dict.fromkeys(_STORE_PATH.findall(content))]


async def replay_reads(episode: EpisodeRecord, tools: ToolSet | None
                       ) -> tuple[list[ReadSpan], set[str]]:
    """Re-run an episode's successful tool calls; return what they read and the locators shown.

    Args:
        episode: The search agent's episode record.
        tools: The same (read-only) tool set over the same store; None for closed-book.
    """
    spans: list[ReadSpan] = []
    seen: set[str] = set()
    if tools is None:
        return spans, seen
    for call in episode.calls:
        for tool_call in call.tool_calls:
            if tool_call.is_error or tool_call.name in NOT_REPLAYED:
                continue
            result = await tools.call(tool_call.name, tool_call.arguments)
            if result.is_error:
                continue
            args = tool_call.arguments if isinstance(tool_call.arguments, dict) else {}
            spans.extend(_span(tool_call.name, args, result.content))
            seen.update(LOCATOR_IN_TEXT.findall(result.content))
    return spans, seen


def cited_locators(citations: Iterable[Citation]) -> set[str]:
    """Locators inside the text that the answer's resolved citations point at."""
    found: set[str] = set()
    for citation in citations:
        if citation.resolved and citation.content:
            found.update(LOCATOR_IN_TEXT.findall(citation.content))
    return found
