"""The LLM judge, beside the model-free grading: correctness and attribution.

Correctness is 0/1 against gold; attribution is three scores of 0/0.5/1.
Each grade is one tool-free call of the judge role with its frozen prompt; the
reply is a JSON object whose reasoning comes before its scores (the order the
prompts ask for), parsed strictly. For attribution the judge is shown every
citation of the answer resolved against the store, each followed by its file,
numbered, the cited lines marked: the whole file when it fits
:data:`CITED_CHARS` characters, else a window placed around the cited lines
(:mod:`memdir.bench._cited`); a citation that resolves to nothing is shown as
NOT FOUND. The judge's defaults live here with it: one call, a 2,048-token cap,
low reasoning effort, temperature 0.
"""

from __future__ import annotations

import json
import re

from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict, Field

from memdir.agents import (
    EpisodeRecord,
    RoleConfig,
    load_prompt,
    prompt_fields,
    resolve_citations,
    run_agent,
)
from memdir.bench._cited import CITED_CHARS, CITED_VIEW, judged_view
from memdir.store import Store

__all__ = [
    "ATTRIBUTION_PROMPT",
    "CITED_CHARS",
    "CITED_VIEW",
    "CORRECTNESS_PROMPT",
    "JUDGE_ROLE",
    "AttributionGrade",
    "CorrectnessGrade",
    "JudgeError",
    "judge_attribution",
    "judge_correctness",
    "judge_role",
    "judged_view",
    "template_text",
]

CORRECTNESS_PROMPT = "judge-correctness"
"""The correctness judge's prompt (fields: question, gold, answer)."""
ATTRIBUTION_PROMPT = "judge-attribution"
"""The attribution judge's prompt (fields: question, answer, cited)."""

JUDGE_ROLE = RoleConfig(role="judge", prompt=CORRECTNESS_PROMPT, toolset=None, max_rounds=1,
                        max_tokens=2048, reasoning_effort="low", temperature=0.0)
"""The judge's defaults: one tool-free call per grade."""

_JSON = re.compile(r"\{.*\}", re.DOTALL)
_HALVES = (0.0, 0.5, 1.0)
_INSTRUCTION = "Grade the answer now. Reply with the JSON object only."


def judge_role(**changes: object) -> RoleConfig:
    """The judge's defaults with ``changes`` applied (e.g. ``prompt="judge-attribution"``)."""
    return JUDGE_ROLE.with_(**changes) if changes else JUDGE_ROLE


def template_text(name: str) -> str:
    """A judge prompt as a template: its blocks included, each field left as ``{{field}}``.

    What a judge hash is taken over: it changes with any edit to the prompt's own
    words, its blocks, or which fields it takes and where.

    Raises:
        ValueError: No prompt of that name ships with memdir.
    """
    return load_prompt(name, **{f: "{{" + f + "}}" for f in prompt_fields(name)}).text


class JudgeError(ValueError):
    """The judge's reply was not the JSON object its prompt asks for."""


class CorrectnessGrade(BaseModel):
    """1 if the answer states what the gold answer states, else 0."""

    model_config = ConfigDict(frozen=True)

    correct: int = Field(ge=0, le=1)
    reason: str = ""
    record: EpisodeRecord


class AttributionGrade(BaseModel):
    """Citation correctness, citation relevance and coherent aggregation, each 0, 0.5 or 1."""

    model_config = ConfigDict(frozen=True)

    citation_correctness: float
    citation_relevance: float
    aggregation: float
    reason: str = ""
    record: EpisodeRecord


def _parse(text: str, keys: tuple[str, ...]) -> dict[str, object]:
    match = _JSON.search(text)
    if match is None:
        raise JudgeError(f"the judge replied without a JSON object: {text[:200]!r}")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise JudgeError(f"the judge's JSON does not parse ({exc}): {text[:200]!r}") from None
    missing = [k for k in keys if k not in data]
    if missing:
        raise JudgeError(f"the judge's reply lacks {', '.join(missing)}: {text[:200]!r}")
    return dict(data)


def _reason(data: dict[str, object]) -> str:
    """The judge's reasoning (``reasoning``; ``reason`` in replies to earlier templates)."""
    return str(data.get("reasoning", data.get("reason", "")))


def _half(value: object, key: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise JudgeError(f"{key} must be 0, 0.5 or 1, not {value!r}") from None
    if number not in _HALVES:
        raise JudgeError(f"{key} must be 0, 0.5 or 1, not {value!r}")
    return number


async def judge_correctness(
    model: Model | str, question: str, gold: str, answer: str, role: RoleConfig | None = None
) -> CorrectnessGrade:
    """Grade ``answer`` against ``gold`` (0 or 1).

    Raises:
        JudgeError: The reply is not the expected JSON.
        AgentError: The model call failed after retries.
    """
    prompt = load_prompt(CORRECTNESS_PROMPT, question=question, gold=str(gold), answer=answer)
    run = await run_agent(model, role or JUDGE_ROLE, prompt, _INSTRUCTION)
    data = _parse(run.text, ("correct",))
    correct = _half(data["correct"], "correct")
    if correct == 0.5:
        raise JudgeError("correct must be 0 or 1, not 0.5")
    return CorrectnessGrade(correct=int(correct), reason=_reason(data), record=run.record)


async def judge_attribution(
    model: Model | str, store: Store, question: str, answer: str, role: RoleConfig | None = None
) -> AttributionGrade:
    """Grade how well ``answer``'s citations into ``store`` support it.

    Raises:
        JudgeError: The reply is not the expected JSON.
        AgentError: The model call failed after retries.
    """
    cited = judged_view(store, resolve_citations(store, answer))
    prompt = load_prompt(ATTRIBUTION_PROMPT, question=question, answer=answer, cited=cited)
    role = role or judge_role(prompt=ATTRIBUTION_PROMPT)
    run = await run_agent(model, role, prompt, _INSTRUCTION)
    keys = ("citation_correctness", "citation_relevance", "aggregation")
    data = _parse(run.text, keys)
    scores = {k: _half(data[k], k) for k in keys}
    return AttributionGrade(**scores, reason=_reason(data), record=run.record)
