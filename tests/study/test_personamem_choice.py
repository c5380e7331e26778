"""The main grid's PersonaMem 32k contexts follow the stated rule and give the paper's count.

Rule (docs/study.md): walk the 32k questions file in order and take a context when
its last checkpoint asks 10 or 12 questions and its persona is not taken yet, until
the counts are 10, 10 and 12 (the paper's three conversations, 32 questions).
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from memdir.study import load_config

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT.parent / "shared" / "data" / "personamem" / "questions_32k.csv"
WANTED = Counter({10: 2, 12: 1})


def _terminal_counts(path: Path) -> list[tuple[str, str, int]]:
    """(context id, persona, questions at the last checkpoint), in file order."""
    ends: dict[str, list[int]] = {}
    persona: dict[str, str] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            context = row["shared_context_id"]
            ends.setdefault(context, []).append(int(row["end_index_in_shared_context"]))
            persona.setdefault(context, row["persona_id"])
    return [(c, persona[c], e.count(max(e))) for c, e in ends.items()]


def _choose(rows: list[tuple[str, str, int]]) -> list[str]:
    taken: list[str] = []
    personas: set[str] = set()
    left = WANTED.copy()
    for context, persona, count in rows:
        if left[count] > 0 and persona not in personas:
            taken.append(context)
            personas.add(persona)
            left[count] -= 1
    assert not +left, f"the file has no contexts for {dict(+left)}"
    return taken


@pytest.mark.skipif(not QUESTIONS.exists(), reason=f"{QUESTIONS} is not present on this machine")
def test_main_grid_names_the_contexts_the_rule_chooses() -> None:
    rows = _terminal_counts(QUESTIONS)
    chosen = _choose(rows)
    config = load_config(ROOT / "configs" / "main-grid.yaml")
    tier32 = [b for b in config.benchmarks if b.name == "personamem" and b.tiers == ["32k"]]
    assert len(tier32) == 1
    assert tier32[0].conversations == chosen
    counts = {c: n for c, _, n in rows}
    assert sum(counts[c] for c in chosen) == 32
    positions = [next(i for i, r in enumerate(rows, 1) if r[0] == c) for c in chosen]
    assert positions == [6, 9, 23]  # as docs/study.md states
