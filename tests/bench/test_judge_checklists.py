"""The judge prompts carry every point of the paper's judge prompts: a checklist per prompt.

Each checklist (``prompts/checklists/judge-*.yaml``) lists the paper's contract
points beside the line of our prompt that carries it; a point whose line is not in
the prompt as sent fails here.
"""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from memdir.bench.judge import ATTRIBUTION_PROMPT, CORRECTNESS_PROMPT, template_text

PROMPTS = (CORRECTNESS_PROMPT, ATTRIBUTION_PROMPT)


def _checklist(name: str) -> dict[str, object]:
    text = (resources.files("memdir.agents") / "prompts" / "checklists" / f"{name}.yaml"
            ).read_text(encoding="utf-8")
    data: dict[str, object] = yaml.safe_load(text)
    return data


@pytest.mark.parametrize("name", PROMPTS)
def test_every_point_of_the_paper_has_a_line_in_the_prompt(name: str) -> None:
    checklist = _checklist(name)
    assert checklist["prompt"] == name
    points = checklist["points"]
    assert isinstance(points, list) and len(points) >= 7
    prompt = template_text(name)
    missing = [p["point"] for p in points if not p.get("line") or p["line"] not in prompt]
    assert missing == [], f"{name}: points with no line in the prompt: {missing}"


def test_a_point_whose_line_was_edited_away_is_caught() -> None:
    checklist = _checklist(CORRECTNESS_PROMPT)
    points = checklist["points"]
    assert isinstance(points, list)
    prompt = template_text(CORRECTNESS_PROMPT).replace("Reason first", "Think first")
    assert [p for p in points if p["line"] not in prompt]
