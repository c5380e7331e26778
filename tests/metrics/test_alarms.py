"""The health alarms: duplicates, stale descriptions, stale facts, lost locators."""

from __future__ import annotations

import pytest
from metrics_helpers import fm

from memdir.metrics import (
    extract_locators,
    find_duplicates,
    find_stale_descriptions,
    find_stale_facts,
    lost_facts,
    measure_state,
    reference_locators,
)

PARAGRAPH = (
    "Alice moved to Lisbon in March 2024 to work as a night nurse at the city hospital; "
    "she rents a flat near the river with her sister. [S4T2]"
)


def _tree(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return measure_state(files).tree


def test_near_duplicates_across_files_are_named() -> None:
    tree = _tree({
        "/memories/people/alice.md": fm("alice", "Alice") + f"# Home\n{PARAGRAPH}\n",
        "/memories/places/lisbon.md": fm("lisbon", "Lisbon") + f"# Residents\n{PARAGRAPH}\n",
        "/memories/food.md": fm("food", "Food") + "Bob cooks bacalhau every Friday evening "
        "for the whole family, with potatoes and olive oil.\n",
    })
    pairs = find_duplicates(tree, 0.9)
    assert len(pairs) == 1
    assert {pairs[0].a, pairs[0].b} == {
        "/memories/people/alice.md > Home",
        "/memories/places/lisbon.md > Residents",
    }
    assert pairs[0].cosine == pytest.approx(1.0)


def test_duplicates_inside_one_file_are_not_cross_file_alarms() -> None:
    tree = _tree({"/memories/a.md": fm("a", "A") + f"# One\n{PARAGRAPH}\n# Two\n{PARAGRAPH}\n"})
    assert find_duplicates(tree, 0.9) == []


def test_stale_description_is_flagged_and_a_fitting_one_is_not() -> None:
    tree = _tree({
        "/memories/car.md": fm("car", "Sourdough starter feeding schedule")
        + "The car needs new brake pads and an oil change before the trip to Porto.\n",
        "/memories/bread.md": fm("bread", "Sourdough starter and baking times")
        + "Feed the sourdough starter twice a day; bake at 240 degrees for 40 minutes.\n",
    })
    stale = find_stale_descriptions(tree)
    assert [s.path for s in stale] == ["/memories/car.md"]
    assert stale[0].cosine == pytest.approx(0.0)


def test_stale_facts_need_two_undated_values_for_one_subject() -> None:
    tree = _tree({
        "/memories/alice.md": fm("alice", "Alice")
        + "- Job: nurse\n- City: Lisbon\n- Job: teacher\n",
        "/memories/bob.md": fm("bob", "Bob")
        + "- Job: carpenter (until 2021)\n- Job: baker\n",
        "/memories/chat.md": fm("chat", "Chat")
        + "\n".join(f"Carol: line {k}" for k in range(6)) + "\n",
    })
    found = find_stale_facts(tree)
    assert [(f.path, f.subject) for f in found] == [("/memories/alice.md", "job")]
    # the body starts on file line 5 (after four frontmatter lines)
    assert found[0].lines == (5, 7)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Alice is a nurse [S5T3].", {"S5T3"}),
        ("Two sources [S5T3, S5T4] and [B4M7; B4M8]", {"S5T3", "S5T4", "B4M7", "B4M8"}),
        ("Adjacent [S1T1][S1T2]", {"S1T1", "S1T2"}),
        ("A message [M12] and a link [see here](x.md) and [Todo]", {"M12"}),
        ("lowercase [s5t3] is not a locator", set()),
    ],
)
def test_extract_locators(text: str, expected: set[str]) -> None:
    assert extract_locators(text) == expected


def test_reference_locators_accept_a_bare_list() -> None:
    assert reference_locators("S1T1\nS1T2, B2M3\n") == {"S1T1", "S1T2", "B2M3"}
    assert reference_locators("Said [S1T1]. Also S9T9 in passing") == {"S1T1"}


def test_lost_facts_share_and_order() -> None:
    lost = lost_facts({"S1T1", "S2T1", "S10T1", "S2T10"}, ["kept [S1T1]", "and [S2T10]"])
    assert lost.reference == 4
    assert lost.missing == ["S2T1", "S10T1"]
    assert lost.share == pytest.approx(0.5)
    assert lost_facts([], ["x"]).share == 0.0
