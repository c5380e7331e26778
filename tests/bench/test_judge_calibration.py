"""The judge calibration set: shipped labels, agreement and kappa, the command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelOutput, get_model
from typer.testing import CliRunner

from agents.fake_judge import FakeJudge, correct, reply_keys
from memdir.bench import load_locomo
from memdir.bench.calibration import _kappa, calibrate, load_calibration_set
from memdir.bench.judge import CORRECTNESS_PROMPT, template_text
from memdir.cli import app
from scripted import text, usage

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LOCOMO = DATA / "locomo" / "locomo10.json"
needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason=f"{LOCOMO} is not present")


class AnswerKeyJudge:
    """A judge that knows the labels (perfect) or always says 1 (lenient)."""

    def __init__(self, lenient: bool = False) -> None:
        self.lenient = lenient
        self.labels = {i.answer: i.label for i in load_calibration_set()}
        self.calls = 0

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any
                 ) -> ModelOutput:
        self.calls += 1
        system = str(input[0].content)
        label = 1 if self.lenient else next(v for a, v in self.labels.items() if a in system)
        return text(json.dumps({"reasoning": "scripted", "correct": label}), usage(400, 10))


def test_the_shipped_set_is_balanced_and_outside_the_test_conversation() -> None:
    items = load_calibration_set()
    assert len(items) >= 30
    assert sum(i.label for i in items) * 2 == len(items)
    assert not any(i.question_id.startswith("conv-50/") for i in items)


def test_kappa_matches_hand_computed_values() -> None:
    assert _kappa(5, 5, 0, 0) == 1.0
    assert _kappa(5, 0, 5, 0) == 0.0  # always 1 on a balanced set: chance agreement only
    assert _kappa(4, 3, 2, 1) == pytest.approx((0.7 - 0.5) / 0.5)
    assert _kappa(3, 0, 0, 0) is None


@needs_locomo
async def test_a_perfect_and_a_lenient_judge() -> None:
    dataset = load_locomo(LOCOMO)
    perfect = AnswerKeyJudge()
    good = await calibrate(get_model("mockllm/model", custom_outputs=perfect), dataset)
    assert good.agreement == 1.0 and good.kappa == 1.0 and good.disagreements == []
    assert perfect.calls == good.items and good.usage.input == 400 * good.items
    lenient = await calibrate(get_model("mockllm/model", custom_outputs=AnswerKeyJudge(True)),
                              dataset)
    assert lenient.agreement == 0.5 and lenient.kappa == 0.0
    assert lenient.false_positive == lenient.items // 2
    assert all(d.label == 0 and d.judged == 1 for d in lenient.disagreements)


def test_the_command_needs_its_data() -> None:
    result = CliRunner().invoke(app, ["judge", "calibrate", "--model", "mockllm/model",
                                      "--data", "/nonexistent"])
    assert result.exit_code == 2
    assert "locomo10.json" in result.stderr


@pytest.fixture
def loopback_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    server = FakeJudge()
    monkeypatch.setenv("CALIBJUDGE_BASE_URL", server.base_url)
    monkeypatch.setenv("CALIBJUDGE_API_KEY", "test-key")
    yield server
    server.close()


def test_the_template_asks_for_the_reasoning_before_the_grade() -> None:
    for name in (CORRECTNESS_PROMPT, "judge-attribution"):
        keys = reply_keys(template_text(name))
        assert keys[0] == "reasoning" and len(keys) >= 2, (name, keys)
    assert "precision" not in template_text(CORRECTNESS_PROMPT)  # no date rule of our own


@needs_locomo
def test_the_command_calibrates_a_judge_served_on_loopback(loopback_judge: FakeJudge) -> None:
    result = CliRunner().invoke(app, ["judge", "calibrate", "--model",
                                      "openai-api/calibjudge/judge", "--data", str(DATA),
                                      "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    items = load_calibration_set()
    dataset = load_locomo(LOCOMO)
    golds = {q.id: q.answer or "" for q in dataset.questions}
    judged = [correct(golds[i.question_id], i.answer) for i in items]
    # every reply, reasoning first, was parsed; the counts are the fake's rule against the labels
    assert report["items"] == len(items) and report["judge_errors"] == 0
    assert loopback_judge.requests == len(items)
    assert report["agreed"] == sum(j == i.label for j, i in zip(judged, items, strict=True))
    assert report["false_positive"] == sum(j == 1 and i.label == 0
                                           for j, i in zip(judged, items, strict=True))
    assert all(d["reason"] == "fake reasoning" for d in report["disagreements"])
