"""Helpers that write small and real stores for the metrics tests."""

from __future__ import annotations

import re


def fm(name: str, description: str) -> str:
    """Frontmatter of a memory file."""
    return f"---\nname: {name}\ndescription: {description}\n---\n"


def verbatim_sessions(conversation: dict[str, object]) -> list[tuple[str, str]]:
    """One (path, text) per session, each turn tagged with its locator [S{n}T{k}]."""
    conv = conversation["conversation"]
    assert isinstance(conv, dict)
    numbers = sorted(
        int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)) is not None
    )
    speakers = f"{conv['speaker_a']} and {conv['speaker_b']}"
    files = []
    for n in numbers:
        date = conv.get(f"session_{n}_date_time", "undated")
        lines = []
        for turn in conv[f"session_{n}"]:
            _, k = turn["dia_id"].split(":")[-2:]
            lines.append(f"[S{n}T{int(k)}] {turn['speaker']}: {turn['text']}")
        name = f"session-{n:02d}"
        desc = f"Session {n} of the conversation between {speakers}, held {date}"
        files.append((f"/memories/{name}.md", fm(name, desc) + "\n" + "\n\n".join(lines) + "\n"))
    return files
