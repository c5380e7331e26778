"""REALTALK (danny911kr/REALTALK, ``data/Chat_*.json``): 21 days of real messaging.

Its dialogue ids do not always follow the session keys (``session_4`` of Chat_1
opens with ``D3:30``) and skip numbers where messages were removed, so locators
are numbered by position, ``S{session}T{position}``, and evidence ids are mapped
through each conversation's own table of dialogue ids.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from memdir.bench._schema import Dataset, DatasetError, EvidenceNote, Question
from memdir.bench.datasets._common import parse_date, read_json, session_keys, validate
from memdir.bench.datasets._entry import BenchmarkEntry
from memdir.bench.datasets._evidence import resolve_evidence
from memdir.conversation import Conversation, Session, Turn, turn_locator

__all__ = ["REALTALK", "REALTALK_CATEGORIES", "REALTALK_DATE_FORMAT", "load_realtalk"]

REALTALK_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
REALTALK_DATE_FORMAT = "%d.%m.%Y, %H:%M:%S"

_CHAT = re.compile(r"^Chat_(\d+)")


class _Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    clean_text: str
    speaker: str
    dia_id: str
    date_time: str | None = None
    blip_caption: str | None = None


class _QA(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: str
    answer: str | int | float
    evidence: list[str] = []
    category: int


def chat_files(folder: Path) -> list[Path]:
    """The ``Chat_N*.json`` files of a folder, in chat-number order."""
    found = [p for p in folder.glob("Chat_*.json") if _CHAT.match(p.name)]
    return sorted(found, key=lambda p: int(_CHAT.match(p.name).group(1)))  # type: ignore[union-attr]


def load_realtalk(path: str | Path) -> Dataset:
    """Load REALTALK from its folder of ``Chat_*.json`` files, or from one such file.

    Raises:
        DatasetError: A file is missing, unreadable or not in REALTALK's format.
    """
    path = Path(path)
    if path.is_dir():
        files = chat_files(path)
        if not files:
            raise DatasetError(path, "holds no Chat_*.json files")
    else:
        files = [path]
    conversations: list[Conversation] = []
    questions: list[Question] = []
    notes: list[EvidenceNote] = []
    for file in files:
        data = read_json(file)
        if not isinstance(data, dict):
            raise DatasetError(file, "expected a JSON object with session_N keys and qa")
        conversation, table = _conversation(data, file)
        conversations.append(conversation)
        found, found_notes = _questions(data, conversation.id, table, file)
        questions.extend(found)
        notes.extend(found_notes)
    return Dataset(
        benchmark="realtalk", source=str(path), conversations=conversations,
        questions=questions, notes=notes,
    )


def _conversation_id(path: Path) -> str:
    match = _CHAT.match(path.name)
    return match.group(0) if match else path.stem


def _conversation(data: dict[str, Any], path: Path) -> tuple[Conversation, dict[str, str]]:
    sessions: list[Session] = []
    table: dict[str, str] = {}
    for number, key in session_keys(data):
        raw_turns = data[key]
        if not isinstance(raw_turns, list):
            raise DatasetError(path, f"{key} should be a list of messages")
        turns = []
        for index, raw in enumerate(raw_turns, start=1):
            where = f"{key}, message {index}"
            turn = validate(_Turn, raw, path, where)
            locator = turn_locator(number, index)
            if turn.dia_id in table:
                raise DatasetError(path, f"{where}: dialogue id {turn.dia_id} occurs twice")
            table[turn.dia_id] = locator
            turns.append(
                Turn(
                    locator=locator, speaker=turn.speaker, text=turn.clean_text,
                    source_id=turn.dia_id, image_caption=turn.blip_caption,
                    time=parse_date(turn.date_time, REALTALK_DATE_FORMAT, path, where),
                )
            )
        date_text = data.get(f"{key}_date_time")
        date = parse_date(date_text, REALTALK_DATE_FORMAT, path, key)
        sessions.append(Session(index=number, date=date, date_text=date_text, turns=turns))
    if not sessions:
        raise DatasetError(path, "has no session_N keys")
    names = data.get("name")
    if isinstance(names, dict) and names:
        speakers = [str(v) for _, v in sorted(names.items())]
    else:
        speakers = sorted({t.speaker for s in sessions for t in s.turns})
    conversation = Conversation(
        id=_conversation_id(path), benchmark="realtalk", speakers=speakers, sessions=sessions,
        meta={"file": path.name},
    )
    return conversation, table


def _questions(
    data: dict[str, Any], conversation_id: str, table: dict[str, str], path: Path
) -> tuple[list[Question], list[EvidenceNote]]:
    raw = data.get("qa")
    if not isinstance(raw, list):
        raise DatasetError(path, "has no 'qa' list of questions")
    questions: list[Question] = []
    notes: list[EvidenceNote] = []
    for index, item in enumerate(raw, start=1):
        qid = f"{conversation_id}/q{index:03d}"
        qa = validate(_QA, item, path, f"question {index}")
        if qa.category not in REALTALK_CATEGORIES:
            raise DatasetError(path, f"question {qid}: unknown category {qa.category}")
        evidence, found = resolve_evidence(qid, qa.evidence, table)
        notes.extend(found)
        answer = qa.answer if isinstance(qa.answer, str) else str(qa.answer)
        questions.append(
            Question(
                id=qid, benchmark="realtalk", conversation_id=conversation_id, text=qa.question,
                answer=answer, category=qa.category,
                category_name=REALTALK_CATEGORIES[qa.category], evidence=evidence,
                evidence_raw=list(qa.evidence), order=index,
            )
        )
    return questions, notes


REALTALK = BenchmarkEntry(
    "realtalk", files=lambda root, tier: [root / "realtalk"],
    load=lambda paths: load_realtalk(paths[0]), grading="token-f1", locator="session")
"""REALTALK in the benchmark catalog: a folder of chats, token F1, session locators."""
