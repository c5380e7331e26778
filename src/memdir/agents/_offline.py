"""The grep-reader: a deterministic search policy that needs no LLM.

It plays the search agent through the same tools and the same loop as a model
would: survey (``view /memories``), grep the question's distinctive terms, read
around the best hits with ``view`` ranges, and answer with the best-supported
lines, each cited as ``[/memories/file.md:L10-12]``. Its state is rebuilt from
the message history on every call, so it is a pure function of the
conversation. It is a zero-cost baseline, and says so in every answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser

from memdir.agents._citations import format_citation
from memdir.conversation import TURN_HEAD
from memdir.tools._grep import GREP_HIT, GREP_SUMMARY
from memdir.tools._ranked import CHUNK_HEADER
from memdir.tools._view import LISTING_ENTRY, NUMBERED_LINE

__all__ = ["BASELINE_LABEL", "Decision", "decide", "question_terms"]

BASELINE_LABEL: Final = "[offline grep-reader baseline, no LLM]"

_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just let like me more most my myself no nor not of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours ever also kind sort type thing things
    get got go going went much many way time times one ones did does would could might
    likely something anything someone anyone else recently new old""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*[A-Za-z]|\d+")
_OPTION = re.compile(r"\(([a-h])\)\s*([^()]+?)(?=\s*\([a-h]\)|$)", re.DOTALL)
_HEADER = re.compile(r"^(name|description|metadata):")
_MAX_TERMS = 6
_MAX_READS = 3


@dataclass
class Decision:
    """What the policy does next: tool calls, or a final answer."""

    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    """(call id, tool name, arguments)."""
    answer: str | None = None


def _stem(word: str) -> str:
    lower = word.lower()
    for suffix in ("ing", "ed", "es", "s"):
        if lower.endswith(suffix) and len(lower) - len(suffix) >= 4:
            return lower[: -len(suffix)]
    return lower


def question_terms(question: str) -> list[str]:
    """The question's distinctive terms, most distinctive first (stemmed, lowercase)."""
    body = _OPTION.split(question)[0] if _OPTION.search(question) else question
    seen: dict[str, float] = {}
    for index, word in enumerate(_WORD.findall(body)):
        lower = word.lower().strip("'-")
        if lower in _STOP or len(lower) < 3:
            continue
        term = _stem(lower)
        # Longer words and names are more distinctive; earlier words break ties.
        weight = len(term) + (3 if word[0].isupper() and index > 0 else 0) - index * 0.01
        seen[term] = max(seen.get(term, 0.0), weight)
    terms = sorted(seen, key=lambda t: -seen[t])[:_MAX_TERMS]
    for _, option in _OPTION.findall(question):
        words = [_stem(w.lower()) for w in _WORD.findall(option)
                 if w.lower() not in _STOP and len(w) >= 3]
        terms.extend(w for w in sorted(words, key=len, reverse=True)[:2] if w not in terms)
    return terms


def _question(messages: Sequence[ChatMessage]) -> str:
    for message in messages:
        if isinstance(message, ChatMessageUser):
            text = message.text
            marker = text.find("Question:")
            return text[marker + len("Question:"):].strip() if marker >= 0 else text.strip()
    return ""


def _results(messages: Sequence[ChatMessage]) -> dict[str, str]:
    """Tool results by call id."""
    return {
        m.tool_call_id: m.text
        for m in messages
        if isinstance(m, ChatMessageTool) and m.tool_call_id and m.error is None
    }


def _calls(messages: Sequence[ChatMessage]) -> list[str]:
    return [
        call.id
        for m in messages
        if isinstance(m, ChatMessageAssistant)
        for call in (m.tool_calls or [])
    ]


@dataclass
class _Hit:
    path: str
    line: int
    text: str
    score: float = 0.0
    terms: set[str] = field(default_factory=set)


def _score_hits(results: dict[str, str], terms: list[str]) -> list[_Hit]:
    hits: dict[tuple[str, int], _Hit] = {}
    weights: dict[str, float] = {}
    for index, term in enumerate(terms):
        text = results.get(f"grep-{index}")
        if not text:
            continue
        rows = list(GREP_HIT.finditer(text))
        weight = weights[term] = 1.0 / math.log2(2 + _total(text, len(rows)))
        for row in rows:
            key = (row["path"], int(row["line"]))
            hit = hits.setdefault(key, _Hit(key[0], key[1], row["text"]))
            # A header line (name, description) routes a reader but rarely answers.
            hit.score += weight / 2 if _HEADER.match(row["text"]) else weight
            hit.terms.add(term)
    # Route by names as a reader would: a file whose path names a query term
    # (people/maya.md for a question about Maya) is about that term, so each of its
    # lines counts as mentioning it, and it outranks the same match elsewhere.
    for hit in hits.values():
        words = set(re.findall(r"[a-z0-9]+", hit.path.lower()))
        named = [t for t in terms if t in words]
        # Summed in the question's term order: a set's order changes with the
        # process's hash seed, and float sums in another order can break a tie
        # between two lines differently from one run to the next.
        hit.score += sum(weights.get(t, 0.0) for t in named if t not in hit.terms)
        hit.score *= 1.0 + 0.5 * len(named)
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.path, h.line))
    return ranked


def _total(text: str, shown: int) -> int:
    head = GREP_SUMMARY.match(text)
    return int(head["total"]) if head else shown


def _descriptions(results: dict[str, str]) -> dict[str, str]:
    """File name -> description, from the survey listing (top-level names only)."""
    listing = results.get("survey", "")
    return {
        match["name"]: match["description"]
        for match in LISTING_ENTRY.finditer(listing)
        if match["name"].endswith(".md")
    }


def _read_lines(results: dict[str, str], ids: list[str]) -> dict[tuple[str, int], str]:
    lines: dict[tuple[str, int], str] = {}
    for call_id in ids:
        if not call_id.startswith("read-"):
            continue
        path = call_id.split("|", 1)[1]
        for match in NUMBERED_LINE.finditer(results.get(call_id, "")):
            lines[(path, int(match["number"]))] = match["text"]
    return lines


def _choose_option(question: str, evidence: str) -> str | None:
    options = _OPTION.findall(question)
    if not options:
        return None
    have = {_stem(w) for w in _WORD.findall(evidence.lower())}

    def overlap(option: tuple[str, str]) -> float:
        words = [_stem(w) for w in _WORD.findall(option[1].lower()) if w.lower() not in _STOP]
        return sum(w in have for w in words) / max(len(words), 1)

    best = max(options, key=overlap)
    return f"({best[0]})"


def _best_sentence(text: str, terms: list[str]) -> str:
    """The sentence of a turn that shares the most terms with the question."""
    body = TURN_HEAD.sub("", text.strip())
    body = re.sub(r"^[A-Z][\w .'-]{0,40}?:\s+", "", body)
    sentences = [p for p in re.split(r"(?<=[.!?])\s+", body) if p.strip()]
    if not sentences:
        return body

    def shared(sentence: str) -> int:
        lower = sentence.lower()
        return sum(1 for t in terms if re.search(rf"\b{re.escape(t)}", lower))

    return max(sentences, key=lambda s: (shared(s), len(s)))


_DATE = re.compile(r"\d{1,2} [A-Z][a-z]+,? \d{4}|\d{4}-\d{2}-\d{2}|[A-Z][a-z]+ \d{1,2},? \d{4}")


def _not_found(searched: str | None, terms: list[str]) -> str:
    """The answer when nothing was found, saying what the reader did (and did not) do.

    Args:
        searched: What the reader looked through: ``"store"`` (grep over the files),
            ``"chunks"`` (the retrieved chunks), ``"listing"`` (the top listing only,
            its greps not run), or None (no memory was searched: a closed-book
            question, or a store the reader could not read).
        terms: The question's distinctive terms.
    """
    if searched is None:
        why = "no memory was searched (no tools to read one), so there is nothing to cite."
    elif not terms:
        why = "the question has no distinctive term to search the memory for."
    elif searched == "listing":
        why = "the memory was listed, but no search of it ran before the answer was due."
    else:
        # The terms are not repeated: an answer that echoes the question would score
        # token overlap with gold answers for finding nothing.
        where = "no line of the store" if searched == "store" else "no retrieved chunk"
        why = f"{where} matches the question's terms."
    return f"{BASELINE_LABEL} Not found in memory: {why}"


def _compose(question: str, hits: list[_Hit], lines: dict[tuple[str, int], str],
             descriptions: dict[str, str], terms: list[str], searched: str | None) -> str:
    if not hits:
        return _not_found(searched, terms)
    hit = hits[0]
    text = lines.get((hit.path, hit.line), hit.text)
    last = hit.line
    follow = lines.get((hit.path, hit.line + 1))
    if follow is not None and (text.rstrip().endswith("?") or text.lstrip().startswith("#")):
        # A question's answer is usually the next turn; a heading's, the line under it.
        text, last = follow, hit.line + 1
        if not text.strip() and (hit.path, hit.line + 2) in lines:
            text, last = lines[(hit.path, hit.line + 2)], hit.line + 2
    answer = _best_sentence(text, terms)
    if question.lower().startswith("when"):
        date = _DATE.search(descriptions.get(hit.path.rsplit("/", 1)[-1], ""))
        if date:
            answer = f"{answer} (said on {date.group(0)})"
    answer = f"{answer} {format_citation(hit.path, hit.line, last)}"
    evidence = " ".join([*lines.values(), *(h.text for h in hits[:_MAX_READS])])
    option = _choose_option(question, evidence)
    if option is not None:
        answer = f"{option} - {answer}"
    return f"{BASELINE_LABEL} {answer}"


def _chunk_hits(
    text: str, terms: list[str]
) -> tuple[list[_Hit], dict[tuple[str, int], str]]:
    """Hits and numbered lines from a ``bm25_chunk_retrieve`` result (chunks shown whole)."""
    lines: dict[tuple[str, int], str] = {}
    path = ""
    number = 0
    for row in text.splitlines():
        header = CHUNK_HEADER.match(row)
        if header:
            path, number = header["path"], 0
            continue
        if path:
            number += 1
            lines[(path, number)] = row
    patterns = {t: re.compile(rf"\b{re.escape(t)}", re.IGNORECASE) for t in terms}
    counts = {t: sum(1 for v in lines.values() if p.search(v)) for t, p in patterns.items()}
    hits = []
    for (where, line), row in lines.items():
        matched = [t for t, p in patterns.items() if p.search(row)]  # in term order
        if matched:
            score = sum(1.0 / math.log2(2 + counts[t]) for t in matched)
            hits.append(_Hit(where, line, row, score, set(matched)))
    hits.sort(key=lambda h: (-h.score, h.path, h.line))
    return hits, lines


def decide(messages: Sequence[ChatMessage], tool_names: Sequence[str], final: bool) -> Decision:
    """The policy's next step, given the history and the tools on offer.

    Args:
        messages: The conversation so far (system, user, assistant and tool turns).
        tool_names: Names of the tools the loop offers.
        final: Tools are withheld; an answer is required now.
    """
    question = _question(messages)
    terms = question_terms(question)
    results = _results(messages)
    ids = _calls(messages)
    can_read = {"view", "grep"} <= set(tool_names)
    if "bm25_chunk_retrieve" in tool_names or "chunks" in results:
        if not final and "chunks" not in ids:
            query = " ".join(w for w in _WORD.findall(question) if w.lower() not in _STOP)
            return Decision(calls=[("chunks", "bm25_chunk_retrieve", {"query": query})])
        found, shown = _chunk_hits(results.get("chunks", ""), terms)
        return Decision(answer=_compose(question, found, shown, {}, terms,
                                        "chunks" if "chunks" in results else None))
    if not final and can_read:
        if "survey" not in ids:
            return Decision(calls=[("survey", "view", {"path": "/memories"})])
        if terms and not any(i.startswith("grep-") for i in ids):
            return Decision(calls=[
                (f"grep-{i}", "grep",
                 {"pattern": rf"\b{re.escape(t)}", "ignore_case": True, "max_results": 300})
                for i, t in enumerate(terms)
            ])
        hits = _score_hits(results, terms)
        if hits and not any(i.startswith("read-") for i in ids):
            return Decision(calls=_reads(hits))
    hits = _score_hits(results, terms)
    if any(i.startswith("grep-") and i in results for i in ids):
        searched: str | None = "store"
    else:  # listed the memory at most: its greps never ran (no terms, or no rounds left)
        searched = "listing" if "survey" in results else None
    return Decision(answer=_compose(question, hits, _read_lines(results, ids),
                                    _descriptions(results), terms, searched))


def _reads(hits: list[_Hit]) -> list[tuple[str, str, dict[str, Any]]]:
    calls = []
    for number, hit in enumerate(hits[:_MAX_READS]):
        start = max(1, hit.line - 1)
        calls.append((
            f"read-{number}|{hit.path}",
            "view",
            {"path": hit.path, "view_range": [start, hit.line + 2]},
        ))
    return calls
