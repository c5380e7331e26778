"""The chunk counts docs/datasets.md states for every LoCoMo and REALTALK conversation hold."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from memdir.bench import Dataset, chunk_conversation
from memdir.conversation import DEFAULT_CHUNK_TOKENS, SESSION_CHUNK_TOKENS

DOC = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"
ROW = re.compile(r"^\| (locomo|realtalk) \| (\S+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", re.M)


def test_the_table_is_recomputed_from_the_data(locomo: Dataset, realtalk: Dataset) -> None:
    rows = ROW.findall(DOC.read_text("utf-8"))
    datasets = {"locomo": locomo, "realtalk": realtalk}
    assert {(b, c) for b, c, *_ in rows} == {
        (d.benchmark, c.id) for d in datasets.values() for c in d.conversations}
    for benchmark, conv_id, sessions, whole, fine, mean in rows:
        conv = datasets[benchmark].conversation(conv_id)
        chunks = chunk_conversation(conv)
        assert int(sessions) == sum(1 for s in conv.sessions if s.turns), conv_id
        assert int(whole) == len(chunk_conversation(conv, SESSION_CHUNK_TOKENS)), conv_id
        assert int(fine) == len(chunks), conv_id
        assert int(mean) == round(statistics.mean(c.tokens for c in chunks)), conv_id
        assert all(c.tokens <= DEFAULT_CHUNK_TOKENS or len(c.locators) == 1 for c in chunks)
