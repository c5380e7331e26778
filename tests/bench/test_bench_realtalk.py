"""REALTALK loader against the real files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from memdir.bench import Dataset, load_realtalk


def test_counts(realtalk: Dataset) -> None:
    assert [c.id for c in realtalk.conversations] == [f"Chat_{n}" for n in range(1, 11)]
    assert len(realtalk.questions) == 728
    assert all(q.evaluated for q in realtalk.questions)


def test_held_out_conversation(realtalk: Dataset) -> None:
    conv = realtalk.conversation("Chat_10")
    assert conv.speakers == ["Fahim Khan", "Muhhamed"]
    questions = realtalk.questions_for("Chat_10")
    assert len(questions) == 85
    assert Counter(q.category_name for q in questions) == {
        "multi-hop": 30, "temporal": 45, "commonsense": 10,
    }


def test_text_dates_and_turn_times(realtalk: Dataset) -> None:
    session = realtalk.conversation("Chat_10").sessions[0]
    assert session.date_text == "29.12.2023, 00:51:12"
    assert session.date is not None and session.date.year == 2023
    assert session.turns[0].text == "Hey good afternoon, how you doing?"
    assert all(t.time is not None for t in session.turns)


def test_locators_follow_sessions_even_where_dialogue_ids_do_not(realtalk: Dataset) -> None:
    conv = realtalk.conversation("Chat_1")
    fourth = conv.sessions[3]
    assert fourth.turns[0].source_id == "D3:30"
    assert fourth.turns[0].locator == "S4T1"


def test_evidence_normalisation_record(realtalk: Dataset) -> None:
    assert len(realtalk.notes) == 188
    actions = Counter(n.action for n in realtalk.notes)
    assert actions["dropped"] == 3 and actions["normalised"] + actions["unresolved"] == 185
    notes = {(n.question_id, n.raw): n for n in realtalk.notes}
    assert notes[("Chat_10/q038", "D12:3-D12:5")].locators == ["S12T3", "S12T4", "S12T5"]
    assert notes[("Chat_10/q020", "D5:12;D5:16")].locators == ["S5T12", "S5T16"]
    assert notes[("Chat_10/q007", "D5:3.")].locators == ["S5T3"]
    for conv in realtalk.conversations:
        known = conv.locators()
        for q in realtalk.questions_for(conv.id):
            assert set(q.evidence) <= known


def test_one_file_loads_alone(realtalk: Dataset) -> None:
    single = load_realtalk(Path(realtalk.source) / "Chat_10_Fahim_Muhhamed.json")
    assert [c.id for c in single.conversations] == ["Chat_10"]
    assert single.questions == realtalk.questions_for("Chat_10")
