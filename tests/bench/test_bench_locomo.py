"""LoCoMo loader against the real file: the checked facts of shared/data/README.md."""

from __future__ import annotations

from collections import Counter

from memdir.bench import LOCATOR, Dataset


def test_counts(locomo: Dataset) -> None:
    assert len(locomo.conversations) == 10
    assert len(locomo.questions) == 1986
    assert sum(q.evaluated for q in locomo.questions) == 1540
    assert all((q.category == 5) == (q.order is None) for q in locomo.questions)


def test_held_out_conversation(locomo: Dataset) -> None:
    conv = locomo.conversation("conv-50")
    assert conv.speakers == ["Calvin", "Dave"]
    questions = locomo.questions_for("conv-50")
    assert len(questions) == 158
    assert Counter(q.category for q in questions) == {1: 32, 2: 32, 3: 7, 4: 87}
    assert [q.order for q in questions] == list(range(1, 159))


def test_sessions_come_from_session_keys_not_date_keys(locomo: Dataset) -> None:
    conv = locomo.conversation("conv-26")
    assert len(conv.sessions) == 19
    assert [s.index for s in conv.sessions] == list(range(1, 20))
    first = conv.sessions[0]
    assert first.date_text == "1:56 pm on 8 May, 2023"
    assert first.date is not None and (first.date.hour, first.date.minute) == (13, 56)
    assert first.turns[0].locator == "S1T1" and first.turns[0].source_id == "D1:1"


def test_every_session_is_dated_and_locators_are_well_formed(locomo: Dataset) -> None:
    for conv in locomo.conversations:
        for session in conv.sessions:
            assert session.date is not None, (conv.id, session.index)
            for turn in session.turns:
                assert LOCATOR.match(turn.locator)
                assert turn.source_id == "D{}:{}".format(*turn.locator[1:].split("T"))


def test_answers_are_text_and_adversarial_items_keep_their_answer(locomo: Dataset) -> None:
    assert all(isinstance(q.answer, str) for q in locomo.questions if q.evaluated)
    converted = [q for q in locomo.questions if q.answer in {"2022", "2", "3"}]
    assert len(converted) >= 6
    adversarial = [q for q in locomo.questions if q.category == 5]
    assert all(q.adversarial_answer for q in adversarial)
    assert sum(q.answer is not None for q in adversarial) == 2


def test_evidence_resolves_to_turns_that_exist(locomo: Dataset) -> None:
    for conv in locomo.conversations:
        known = conv.locators()
        for q in locomo.questions_for(conv.id, evaluated_only=False):
            assert set(q.evidence) <= known, q.id


def test_malformed_evidence_is_normalised_and_recorded(locomo: Dataset) -> None:
    notes = {(n.question_id, n.raw): n for n in locomo.notes}
    assert 8 <= len(notes) <= 12
    assert notes[("conv-26/q038", "D8:6; D9:17")].locators == ["S8T6", "S9T17"]
    assert notes[("conv-43/q019", "D:11:26")].locators == ["S11T26"]
    assert notes[("conv-50/q070", "D30:05")].locators == ["S30T5"]
    assert notes[("conv-42/q089", "D")].action == "unresolved"
    assert notes[("conv-42/q059", "D10:19")].action == "unresolved"
    by_id = {q.id: q for q in locomo.questions}
    assert by_id["conv-49/q032"].evidence == ["S9T1", "S4T4", "S4T6"]
    assert by_id["conv-26/q038"].evidence_raw == ["D8:6; D9:17"]


def test_photos_keep_their_caption(locomo: Dataset) -> None:
    captions = [t for c in locomo.conversations for t in c.turns if t.image_caption]
    assert len(captions) > 1000
