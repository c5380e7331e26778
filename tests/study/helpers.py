"""Helpers for the study tests: configs on the shared data, and scripted mockllm models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model

from memdir.study import StudyConfig

OFFLINE = "memdir/grep-reader"
SHARED_DATA = (Path(__file__).resolve().parents[2].parent / "shared" / "data").resolve()
"""The same folder as the ``shared_data`` fixture, for module-scoped fixtures."""


def usage(inp: int = 400, out: int = 20, cached: int = 100) -> ModelUsage:
    """An explicit usage, so no tokenizer is ever needed."""
    return ModelUsage(input_tokens=inp, output_tokens=out, input_tokens_cache_read=cached,
                      total_tokens=inp + out + cached)


def text_output(content: str, u: ModelUsage | None = None) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", content)
    out.usage = u or usage()
    return out


def model_events(sample: EvalSample, model: str) -> list[ModelEvent]:
    """The sample's logged calls to ``model`` (``provider/name``), in order."""
    return [e for e in sample.events if isinstance(e, ModelEvent) and e.model == model]


def smoke_config(data: Path, limit: int | None, **changes: Any) -> StudyConfig:
    """LoCoMo conv-50 and REALTALK Chat_10, zero-cost variants, the offline policy."""
    base: dict[str, Any] = {
        "name": "smoke", "data_dir": str(data),
        "benchmarks": [
            {"name": "locomo", "conversations": ["conv-50"], "limit": limit},
            {"name": "realtalk", "conversations": ["Chat_10"], "limit": limit},
        ],
        "variants": ["closed-book", "chunk", "verbatim"],
        "search": {"models": [OFFLINE]},
    }
    base.update(changes)
    return StudyConfig.model_validate(base)


class ScriptedJudge:
    """A judge that answers from the messages: attribution or correctness JSON.

    Counts the calls of each kind so a test can check exactly how many were made.
    """

    def __init__(self) -> None:
        self.correctness = 0
        self.attribution = 0

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any
                 ) -> ModelOutput:
        system = str(input[0].content)
        if "citation_relevance" in system:
            self.attribution += 1
            reply = {"citation_correctness": 1, "citation_relevance": 0.5, "aggregation": 1,
                     "reason": "scripted"}
        else:
            self.correctness += 1
            reply = {"correct": 1, "reason": "scripted"}
        return text_output(json.dumps(reply), usage(300, 15, 0))

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)


class FailingSearcher:
    """A search model that answers ``good`` questions, then fails like a dead provider."""

    def __init__(self, good: int | None) -> None:
        self.good = good
        self.calls = 0

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any
                 ) -> ModelOutput:
        self.calls += 1
        if self.good is not None and self.calls > self.good:
            raise RuntimeError("provider unreachable")
        return text_output("Calvin moved to Boston [/memories/session-01.md]")

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)
