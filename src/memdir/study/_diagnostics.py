"""Retrieval diagnostics: did the search agent see the evidence, and did it cite it?

An episode record keeps the text of every tool result the agent was shown, so
the diagnostics read it from there. An evidence locator (``S5T3``) counts as
*seen* when it appears in any successful tool result, and as *cited* when it
appears in the text a resolved citation of the answer points at. A wrong answer
whose evidence was never seen was a search failure; one whose evidence was seen
was a reading failure.

Records written before tool results were kept (episode schema version 1) are
read by replaying their tool calls against the same store instead: a store does
not change while it is searched and the read tools are pure, so the replay gives
back the same text. Shell commands are not replayed (they may have side
effects), so for those old records under the shell harness only the citations
count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memdir.agents import Citation, EpisodeRecord
from memdir.conversation import LOCATOR_IN_TEXT
from memdir.study._records import ReadSpan
from memdir.tools import ToolSet

__all__ = [
    "NOT_REPLAYED",
    "cited_locators",
    "episode_reads",
    "recorded_reads",
    "replay_reads",
]

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
    query = _query(name, args)
    if name in ("section_read", "toc", "grep"):
        return [ReadSpan(tool=name, path=path or "/memories", query=query)]
    return [ReadSpan(tool=name, path=p, query=query)
            for p in dict.fromkeys(_STORE_PATH.findall(content))]


def _query(name: str, args: dict[str, object]) -> str | None:
    """What a call looked for, as a reader of the record wants to see it."""
    if name == "grep":
        pattern = args.get("pattern")
        return None if pattern is None else str(pattern)
    if name == "section_read":
        headings = args.get("heading_path")
        if isinstance(headings, list):
            return " > ".join(str(h) for h in headings)
        return None if headings is None else str(headings)
    for key in ("query", "command"):  # ranked search and chunk retrieval; the shell
        if args.get(key) is not None:
            return str(args[key])
    return None


def recorded_reads(episode: EpisodeRecord) -> tuple[list[ReadSpan], set[str]] | None:
    """What an episode's successful tool calls read, and the locators shown, from its record.

    Returns None when some tool call's result is not in the record (a record
    written before results were kept); :func:`episode_reads` then replays.
    """
    calls = [t for call in episode.calls for t in call.tool_calls]
    if any(t.result is None for t in calls):
        return None
    spans: list[ReadSpan] = []
    seen: set[str] = set()
    for tool_call in calls:
        if tool_call.is_error or tool_call.result is None:
            continue
        args = tool_call.arguments if isinstance(tool_call.arguments, dict) else {}
        spans.extend(_span(tool_call.name, args, tool_call.result))
        seen.update(LOCATOR_IN_TEXT.findall(tool_call.result))
    return spans, seen


async def episode_reads(episode: EpisodeRecord, tools: ToolSet | None
                        ) -> tuple[list[ReadSpan], set[str]]:
    """What the episode read and the locators it was shown: from the record, else a replay.

    Args:
        episode: The search agent's episode record.
        tools: The same (read-only) tool set over the same store, used only to replay
            a record that predates stored results; None for closed-book.
    """
    found = recorded_reads(episode)
    return found if found is not None else await replay_reads(episode, tools)


async def replay_reads(episode: EpisodeRecord, tools: ToolSet | None
                       ) -> tuple[list[ReadSpan], set[str]]:
    """Re-run an episode's successful tool calls; return what they read and the locators shown.

    The fallback for records written before tool results were kept.

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
