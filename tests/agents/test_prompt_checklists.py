"""Every prompt's checklist: each contract point of the paper is carried by a line we send.

The checklists live beside the prompts (src/memdir/agents/prompts/checklists/). Each
point's passage is looked up in the prompt as rendered for every harness it lists,
so a checklist can claim only what the text sent to the model says.
"""

from __future__ import annotations

import pytest

from memdir.agents import prompt_names
from memdir.agents._checklists import (
    check_checklists,
    load_checklists,
    parse_checklist,
    rendered,
)
from memdir.tools import HARNESSES


def test_every_point_of_every_checklist_is_carried_by_the_prompt_as_sent() -> None:
    gaps = check_checklists()
    assert gaps == [], "\n".join(f"{g.prompt}: {g.section}: {g.point}" for g in gaps)
    assert sum(len(c.points) for c in load_checklists()) > 250  # the contracts, not a sample


def test_every_prompt_has_a_checklist_under_every_harness_that_changes_it() -> None:
    listed: dict[str, tuple[str, ...]] = {}
    for checklist in load_checklists():
        for prompt, harnesses in checklist.prompts.items():
            assert prompt not in listed, f"{prompt} is in two checklists"
            listed[prompt] = harnesses
    wanted = list(prompt_names())
    assert sorted(listed) == sorted(wanted)
    for prompt in wanted:  # a prompt a harness rewords is checked as each harness sends it
        center = rendered(prompt)
        if any(rendered(prompt, h) != center for h in HARNESSES):
            assert listed[prompt] == tuple(HARNESSES), prompt
        else:
            assert "center" in listed[prompt], prompt


def test_every_family_has_its_points_where_the_issue_found_none() -> None:
    # The gaps the second audit named: each is now a point of its prompt's checklist.
    points = {(c.family, p.section) for c in load_checklists() for p in c.points}
    sections = {s for _, s in points}
    for wanted in ("A.5 retriever, cost model", "A.5 retriever, output",
                   "A.5 curator, memory notes", "A.5 curator, a workable shape",
                   "A.5 curator, strategy 1", "A.3, cost model", "A.3, concluding absence",
                   "A.3, the user turn", "A.1, principles: temporal awareness",
                   "A.1, principles: description"):
        assert wanted in sections, wanted


def test_a_point_the_prompt_does_not_carry_is_reported() -> None:
    # The old Gold-Standard retriever's closing rule: no line of the prompt says it now.
    checklist = parse_checklist("t", {
        "family": "t", "paper": "A.5",
        "prompts": {"retriever-guidance": ["center", "shell"]},
        "points": [
            {"section": "A.5", "point": "old", "text": "Keep it short and concrete."},
            {"section": "A.5", "point": "tools", "text": {
                "default": "`grep` matches lines", "shell": "Your one tool is `bash`"}},
        ]})
    gaps = check_checklists((checklist,))
    assert [(g.prompt, g.point) for g in gaps] == [("retriever-guidance", "old"),
                                                   ("retriever-guidance@shell", "old")]


@pytest.mark.parametrize(("raw", "message"), [
    ({"family": "t", "paper": "p", "prompts": {}}, "needs family, paper, prompts and points"),
    ({"family": "t", "paper": "p", "prompts": {}, "points": [], "extra": 1}, "unknown keys"),
    ({"family": "t", "paper": "p", "prompts": {"execution": ["zsh"]}, "points": []},
     "unknown harness"),
    ({"family": "t", "paper": "p", "prompts": {"execution": ["center"]},
      "points": [{"section": "s", "point": "x", "text": "y", "only": ["curator"]}]},
     "does not list"),
    ({"family": "t", "paper": "p", "prompts": {"execution": ["center"]},
      "points": [{"section": "s", "point": "x"}]}, "needs section, point and text"),
])
def test_a_malformed_checklist_is_refused_with_what_to_fix(raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_checklist("t", raw)
