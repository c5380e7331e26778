"""PersonaMem (bowen-upenn/PersonaMem on the HF hub): multiple-choice questions on persona chats.

Two files per tier: ``questions_<tier>.csv`` (one row per question) and
``shared_contexts_<tier>.jsonl`` (one line per context, ``{"<id>": [{role, content}, ...]}``).
A context is a run of *blocks*, each opened by a ``system`` message stating the
persona; a question sees the first ``end_index_in_shared_context`` messages.
Blocks become sessions and messages get locators ``B{block}M{message}`` (both
1-based, the block's system message being M1).
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from memdir.bench._schema import Dataset, DatasetError, Question
from memdir.bench.datasets._common import iter_lines, read_text, validate
from memdir.bench.datasets._entry import BenchmarkEntry
from memdir.conversation import Conversation, Session, Turn, block_locator

__all__ = [
    "PERSONAMEM",
    "PERSONAMEM_CATEGORIES",
    "last_checkpoint",
    "load_personamem",
    "load_personamem_questions",
    "personamem_prefix",
    "terminal_questions",
]

PERSONAMEM_CATEGORIES = {
    1: "recall_user_shared_facts",
    2: "recalling_facts_mentioned_by_the_user",
    3: "recalling_the_reasons_behind_previous_updates",
    4: "track_full_preference_evolution",
    5: "provide_preference_aligned_recommendations",
    6: "suggest_new_ideas",
    7: "generalizing_to_new_scenarios",
}
"""PersonaMem's question types, numbered by memdir (the benchmark names them only)."""

_TYPE_IDS = {name: number for number, name in PERSONAMEM_CATEGORIES.items()}
_COLUMNS = (
    "persona_id", "question_id", "question_type", "topic", "user_question_or_message",
    "correct_answer", "all_options", "shared_context_id", "end_index_in_shared_context",
)
_GOLD = re.compile(r"^\(([a-z])\)$")
_LABEL = re.compile(r"^([A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)?): ")
_KEY = re.compile(r'^\s*\{\s*"([^"]+)"')


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: str
    content: str


def _options(text: str, path: Path, where: str) -> list[str]:
    """Options are a JSON list in some rows and a Python list literal in others."""
    value: Any
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise DatasetError(
                path, f"{where}: all_options is neither a JSON list nor a Python list literal"
            ) from None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise DatasetError(path, f"{where}: all_options should be a non-empty list of strings")
    return value


def load_personamem_questions(path: str | Path) -> list[Question]:
    """Read a ``questions_<tier>.csv`` file (no contexts needed).

    Each question's ``order`` is its 1-based position among the questions on the
    same context, in file order.

    Raises:
        DatasetError: The file is missing, lacks a column, or a row is malformed.
    """
    path = Path(path)
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    missing = [c for c in _COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise DatasetError(path, f"missing column(s) {', '.join(missing)}")
    questions: list[Question] = []
    per_context: dict[str, int] = defaultdict(int)
    for line, row in enumerate(reader, start=2):
        questions.append(_question(row, path, f"row at line {line}", per_context))
    return questions


def _question(
    row: dict[str, str], path: Path, where: str, per_context: dict[str, int]
) -> Question:
    kind = row["question_type"]
    if kind not in _TYPE_IDS:
        raise DatasetError(path, f"{where}: unknown question_type {kind!r}")
    options = _options(row["all_options"], path, where)
    gold = row["correct_answer"].strip()
    match = _GOLD.match(gold)
    if match is None or ord(match.group(1)) - ord("a") >= len(options):
        raise DatasetError(path, f"{where}: correct_answer {gold!r} is not one of the options")
    try:
        end = int(row["end_index_in_shared_context"])
    except ValueError:
        raise DatasetError(path, f"{where}: end_index_in_shared_context is not a number") from None
    context = row["shared_context_id"]
    per_context[context] += 1
    return Question(
        id=row["question_id"], benchmark="personamem", conversation_id=context,
        text=row["user_question_or_message"], answer=gold, category=_TYPE_IDS[kind],
        category_name=kind, options=options, order=per_context[context], end_index=end,
        meta={"persona_id": row["persona_id"], "topic": row["topic"]},
    )


def _read_contexts(path: Path, wanted: set[str] | None) -> dict[str, list[_Message]]:
    contexts: dict[str, list[_Message]] = {}
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        key = _KEY.match(line)
        if wanted is not None and key is not None and key.group(1) not in wanted:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(path, f"line {number} is not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict) or len(record) != 1:
            raise DatasetError(path, f"line {number}: expected one {{id: [messages]}} object")
        ((context_id, messages),) = record.items()
        if not isinstance(messages, list):
            raise DatasetError(path, f"line {number}: context {context_id} is not a list")
        contexts[context_id] = [
            validate(_Message, m, path, f"line {number}, message {i}")
            for i, m in enumerate(messages)
        ]
    return contexts


def _speaker_and_text(message: _Message) -> tuple[str, str]:
    """Split a leading ``Label: `` (e.g. ``User: ``) off user and assistant messages."""
    if message.role != "system":
        match = _LABEL.match(message.content)
        if match:
            return match.group(1), message.content[match.end():]
    return message.role.capitalize(), message.content


def _conversation(context_id: str, messages: list[_Message], meta: dict[str, str]) -> Conversation:
    blocks: list[list[Turn]] = []
    for index, message in enumerate(messages):
        if not blocks or (message.role == "system" and blocks[-1]):
            blocks.append([])
        speaker, text = _speaker_and_text(message)
        locator = block_locator(len(blocks), len(blocks[-1]) + 1)
        blocks[-1].append(Turn(locator=locator, speaker=speaker, text=text, source_id=str(index)))
    sessions = [Session(index=i, turns=turns) for i, turns in enumerate(blocks, start=1)]
    speakers: dict[str, None] = {}
    for session in sessions:
        for turn in session.turns:
            if turn.speaker != "System":
                speakers.setdefault(turn.speaker, None)
    return Conversation(
        id=context_id, benchmark="personamem", speakers=list(speakers), sessions=sessions,
        meta=meta,
    )


def load_personamem(questions: str | Path, contexts: str | Path) -> Dataset:
    """Load a PersonaMem tier: its questions CSV and its shared-contexts JSONL.

    Only the contexts the questions use are kept, each in full; use
    :func:`personamem_prefix` for the part a question sees.

    Raises:
        DatasetError: A file is unreadable or malformed, a question names a context
            the JSONL lacks, or an end index lies past the end of its context.
    """
    questions_path, contexts_path = Path(questions), Path(contexts)
    items = load_personamem_questions(questions_path)
    wanted = {q.conversation_id for q in items}
    raw = _read_contexts(contexts_path, wanted)
    missing = sorted(wanted - raw.keys())
    if missing:
        raise DatasetError(
            contexts_path,
            f"lacks {len(missing)} context(s) the questions in {questions_path.name} use, "
            f"e.g. {missing[0]}; is it the same tier?",
        )
    for q in items:
        assert q.end_index is not None
        if q.end_index > len(raw[q.conversation_id]):
            raise DatasetError(
                questions_path,
                f"question {q.id}: end index {q.end_index} is past the end of context "
                f"{q.conversation_id} ({len(raw[q.conversation_id])} messages)",
            )
    persona = {q.conversation_id: q.meta["persona_id"] for q in items}
    conversations = [
        _conversation(cid, raw[cid], {"persona_id": persona[cid]})
        for cid in sorted(wanted, key=lambda c: _first_seen(items, c))
    ]
    return Dataset(
        benchmark="personamem", source=str(questions_path), conversations=conversations,
        questions=items,
    )


def _first_seen(items: list[Question], context_id: str) -> int:
    return next(i for i, q in enumerate(items) if q.conversation_id == context_id)


def personamem_prefix(conversation: Conversation, end_index: int) -> Conversation:
    """The part of a PersonaMem context a question sees: its first ``end_index`` messages."""
    sessions = []
    for session in conversation.sessions:
        turns = [t for t in session.turns if int(t.source_id or 0) < end_index]
        if turns:
            sessions.append(session.model_copy(update={"turns": turns}))
    return conversation.model_copy(update={"sessions": sessions})


def terminal_questions(dataset: Dataset, conversation_id: str) -> list[Question]:
    """The questions asked at a context's last checkpoint (its largest end index)."""
    items = dataset.questions_for(conversation_id)
    if not items:
        return []
    last = max(q.end_index or 0 for q in items)
    return [q for q in items if q.end_index == last]


def last_checkpoint(dataset: Dataset, conversation_id: str) -> tuple[Conversation, list[Question]]:
    """A context's terminal checkpoint: its last questions, and the prefix they see."""
    questions = terminal_questions(dataset, conversation_id)
    last = max((q.end_index or 0 for q in questions), default=0)
    return personamem_prefix(dataset.conversation(conversation_id), last), questions


def _files(root: Path, tier: str) -> list[Path]:
    folder = root / "personamem"
    return [folder / f"questions_{tier}.csv", folder / f"shared_contexts_{tier}.jsonl"]


PERSONAMEM = BenchmarkEntry(
    "personamem", files=_files, load=lambda paths: load_personamem(paths[0], paths[1]),
    grading="option", locator="block", tiers=("32k", "128k", "1M"), default_tier="32k",
    cell_questions=last_checkpoint)
"""PersonaMem in the benchmark catalog: two files per context tier, option match, block
locators; a cell asks a context's terminal-checkpoint questions of the prefix they see."""
