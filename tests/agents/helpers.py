"""Helpers for the agent tests: scripted outputs, tiny tool sets, a verbatim store writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir.conversation import Conversation, Session, conversation_from_json
from memdir.store import Frontmatter, Store, render_file


def session_file(session: Session, speakers: list[str]) -> tuple[str, str]:
    stem = f"session-{session.index:02d}"
    description = f"Session {session.index}, {session.date_text}, {' and '.join(speakers)}"
    lines = [f"# Session {session.index} ({session.date_text})", ""]
    for turn in session.turns:
        lines.append(f"[{turn.locator}] {turn.speaker}: {turn.text}")
    body = "\n".join(lines) + "\n"
    header = Frontmatter(name=stem, description=description)
    return f"/memories/{stem}.md", render_file(header, body)


def write_verbatim(store: Store, conversation: Conversation) -> None:
    """A tiny verbatim-dump writer: one file per session, turns as locator-marked lines."""
    for session in conversation.sessions:
        path, content = session_file(session, conversation.speakers)
        store.create(path, content)


def locomo_conversation(
    path: Path, sample: str = "conv-26"
) -> tuple[Conversation, list[dict[str, Any]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    item = next(d for d in data if d["sample_id"] == sample)
    conv = item["conversation"]
    sessions = []
    n = 1
    while f"session_{n}" in conv:
        turns = []
        for t in conv[f"session_{n}"]:
            caption = f" [shares an image: {t['blip_caption']}]" if t.get("blip_caption") else ""
            turns.append({"speaker": t["speaker"], "text": t["text"] + caption})
        sessions.append({"id": n, "date": conv[f"session_{n}_date_time"], "turns": turns})
        n += 1
    speakers = [conv["speaker_a"], conv["speaker_b"]]
    data = {"speakers": speakers, "sessions": sessions}
    return conversation_from_json(data, id=sample), item["qa"]
