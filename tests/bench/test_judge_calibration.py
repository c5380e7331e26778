"""The judge calibration set: shipped labels, agreement and kappa, the command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelOutput, get_model
from typer.testing import CliRunner

from memdir.bench import load_locomo
from memdir.bench.calibration import _kappa, calibrate, load_calibration_set
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
        return text(json.dumps({"correct": label, "reason": "scripted"}), usage(400, 10))


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
