"""LoCoMo (snap-research/LoCoMo, ``data/locomo10.json``): ten long two-person dialogues."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from memdir.bench._schema import Dataset, DatasetError, EvidenceNote, Question
from memdir.bench.datasets._common import parse_date, read_json, session_keys, validate
from memdir.bench.datasets._entry import BenchmarkEntry
from memdir.bench.datasets._evidence import resolve_evidence
from memdir.conversation import Conversation, Session, Turn, turn_locator

__all__ = ["LOCOMO", "LOCOMO_CATEGORIES", "LOCOMO_DATE_FORMAT", "load_locomo"]

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo's question categories; category 5 (adversarial) is left out of evaluation."""

ADVERSARIAL = 5
LOCOMO_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


class _Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    speaker: str
    dia_id: str
    text: str
    blip_caption: str | None = None


class _QA(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: str
    answer: str | int | float | None = None
    evidence: list[str] = []
    category: int
    adversarial_answer: str | None = None


class _Sample(BaseModel):
    model_config = ConfigDict(extra="ignore")

    sample_id: str
    conversation: dict[str, Any]
    qa: list[_QA]


def _answer_text(value: str | int | float | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def load_locomo(path: str | Path) -> Dataset:
    """Load ``locomo10.json`` (or any file in its format).

    Args:
        path: The JSON file: a list of samples with ``conversation`` and ``qa``.

    Raises:
        DatasetError: The file is missing, is not JSON, or does not have LoCoMo's shape.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError(path, "expected a JSON list of conversations at the top level")
    conversations: list[Conversation] = []
    questions: list[Question] = []
    notes: list[EvidenceNote] = []
    for position, item in enumerate(data):
        sample = validate(_Sample, item, path, f"conversation #{position + 1}")
        conversation, table = _conversation(sample, path)
        conversations.append(conversation)
        found, found_notes = _questions(sample, table, path)
        questions.extend(found)
        notes.extend(found_notes)
    return Dataset(
        benchmark="locomo", source=str(path), conversations=conversations,
        questions=questions, notes=notes,
    )


def _conversation(sample: _Sample, path: Path) -> tuple[Conversation, dict[str, str]]:
    record = sample.conversation
    where = f"conversation {sample.sample_id}"
    speakers = [str(record[k]) for k in ("speaker_a", "speaker_b") if k in record]
    sessions: list[Session] = []
    table: dict[str, str] = {}
    for number, key in session_keys(record):
        raw_turns = record[key]
        if not isinstance(raw_turns, list):
            raise DatasetError(path, f"{where}: {key} should be a list of turns")
        turns = []
        for index, raw in enumerate(raw_turns, start=1):
            turn = validate(_Turn, raw, path, f"{where}, {key}, turn {index}")
            locator = turn_locator(number, index)
            table[turn.dia_id] = locator
            turns.append(
                Turn(locator=locator, speaker=turn.speaker, text=turn.text,
                     source_id=turn.dia_id, image_caption=turn.blip_caption)
            )
        date_text = record.get(f"{key}_date_time")
        date = parse_date(date_text, LOCOMO_DATE_FORMAT, path, f"{where}, {key}")
        sessions.append(Session(index=number, date=date, date_text=date_text, turns=turns))
    if not sessions:
        raise DatasetError(path, f"{where} has no session_N keys")
    conversation = Conversation(
        id=sample.sample_id, benchmark="locomo", speakers=speakers, sessions=sessions
    )
    return conversation, table


def _questions(
    sample: _Sample, table: dict[str, str], path: Path
) -> tuple[list[Question], list[EvidenceNote]]:
    questions: list[Question] = []
    notes: list[EvidenceNote] = []
    order = 0
    for index, qa in enumerate(sample.qa, start=1):
        qid = f"{sample.sample_id}/q{index:03d}"
        if qa.category not in LOCOMO_CATEGORIES:
            raise DatasetError(path, f"question {qid}: unknown category {qa.category}")
        evaluated = qa.category != ADVERSARIAL
        if evaluated:
            order += 1
            if qa.answer is None:
                raise DatasetError(path, f"question {qid}: category {qa.category} has no answer")
        evidence, found = resolve_evidence(qid, qa.evidence, table)
        notes.extend(found)
        questions.append(
            Question(
                id=qid, benchmark="locomo", conversation_id=sample.sample_id,
                text=qa.question, answer=_answer_text(qa.answer), category=qa.category,
                category_name=LOCOMO_CATEGORIES[qa.category], evidence=evidence,
                evidence_raw=list(qa.evidence), order=order if evaluated else None,
                adversarial_answer=qa.adversarial_answer,
            )
        )
    return questions, notes


LOCOMO = BenchmarkEntry(
    "locomo", files=lambda root, tier: [root / "locomo" / "locomo10.json"],
    load=lambda paths: load_locomo(paths[0]), grading="token-f1", locator="session")
"""LoCoMo in the benchmark catalog: one file, token F1, session locators."""
