"""Helpers that write small and real stores for the metrics tests."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdir.store import Store


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


def fill_people(store: Store) -> None:
    """Two people files, one citing a section of the other (the health tests' small store)."""
    store.create("/memories/people/alice.md", fm("alice", "Alice, a nurse in Lisbon")
                 + "# Work\nAlice works night shifts as a nurse in Lisbon [S1T2].\n"
                 + "# Home\nAlice lives by the river with her sister [S1T4, S2T1].\n")
    store.create("/memories/people/bob.md", fm("bob", "Bob, a carpenter")
                 + "Bob builds oak tables in his workshop and knows Alice [S2T3]. "
                 + "see /memories/people/alice.md > # Work\n")
