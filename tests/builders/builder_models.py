"""Scripted builder models that answer from the messages, so a resumed build gets the same
outputs an uninterrupted one got: the reply depends only on the chunk (or pass) and round.

``ChunkWriter`` plays the management agent: on a chunk's first round it writes a note for
the session and updates a running log (so every state depends on the chunks before it);
on the second it replies. It can raise, or hang after writing, at a chosen chunk.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from inspect_ai.model import Model, ModelOutput, get_model

from scripted import calls, text


def _note(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def _session(user_text: str) -> int:
    found = re.search(r"^# Session (\d+)", user_text, re.MULTILINE)
    assert found, "the chunk turn names no session"
    return int(found.group(1))


def _first_turn(user_text: str) -> str:
    found = re.search(r"^(\[S\d+T\d+\] .*)$", user_text, re.MULTILINE)
    return found.group(1) if found else "(no turn)"


class ChunkWriter:
    """A deterministic management model.

    Args:
        fail_at: Raise on the second round of this session's chunk (after its writes).
        hang_at: On the second round of this session's chunk, touch ``marker`` and sleep.
        marker: The file ``hang_at`` touches.
    """

    def __init__(self, fail_at: int | None = None, hang_at: int | None = None,
                 marker: Path | None = None) -> None:
        self.fail_at = fail_at
        self.hang_at = hang_at
        self.marker = marker
        self.calls = 0

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any
                 ) -> ModelOutput:
        self.calls += 1
        user = str(input[1].text)
        session = _session(user)
        rounds = sum(1 for m in input if m.role == "assistant")
        if rounds == 0:
            return self._write(session, user)
        if session == self.fail_at:
            raise RuntimeError("provider unreachable (scripted)")
        if session == self.hang_at:
            assert self.marker is not None
            self.marker.write_text("written")
            time.sleep(600)
        return text(f"Filed session {session}.")

    def _write(self, session: int, user: str) -> ModelOutput:
        note = _note(f"session-{session}", f"What session {session} said",
                     f"# Session {session}\n\n- {_first_turn(user)}")
        first = ("create", {"path": f"/memories/sessions/session-{session}.md",
                            "file_text": note})
        if session == 1:
            log = _note("log", "Which sessions are filed", "last: S1")
            return calls(first, ("create", {"path": "/memories/log.md", "file_text": log}))
        return calls(first, ("str_replace", {"path": "/memories/log.md",
                                             "old_str": f"last: S{session - 1}",
                                             "new_str": f"last: S{session}"}))

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)
