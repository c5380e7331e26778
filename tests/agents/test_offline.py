"""The offline grep-reader on real LoCoMo conv-26: every non-adversarial question.

It answers through the same loop and tools a model would use; every citation it
gives must resolve to a real file and line range. Token F1 (the standard LoCoMo
scoring: normalise, split into tokens, precision and recall) is printed for the
report; the test asserts it stays above a floor well clear of zero.
"""

from __future__ import annotations

import asyncio
import os
import re
import string
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memdir.agents import BASELINE_LABEL, OFFLINE_MODEL, ask
from memdir.store import Store

from .helpers import locomo_conversation, write_verbatim

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_CITE = re.compile(r"\[/memories[^\]]*\]")


def _tokens(text: str) -> list[str]:
    text = str(text).lower().replace(",", "")
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return _ARTICLES.sub(" ", text).split()


def token_f1(prediction: str, gold: str) -> float:
    pred, ref = _tokens(prediction), _tokens(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def test_token_f1_matches_hand_values() -> None:
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    assert token_f1("The cat sat", "a cat") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("nothing", "else") == 0.0


async def test_offline_policy_on_locomo_conv_26(shared_data: Path, store: Store) -> None:
    conversation, qa = locomo_conversation(shared_data / "locomo/locomo10.json")
    write_verbatim(store, conversation)
    questions = [q for q in qa if q["category"] != 5]
    assert len(questions) == 152
    answers = await asyncio.gather(*(ask(store, q["question"], variant="flat")
                                     for q in questions))
    scores = []
    for q, answer in zip(questions, answers, strict=True):
        assert answer.model == OFFLINE_MODEL and answer.zero_cost_baseline
        assert answer.text.startswith(BASELINE_LABEL)
        assert answer.usage.total == 0 and answer.cost == 0.0
        assert answer.citations, q["question"]
        for citation in answer.citations:
            assert citation.resolved, (q["question"], citation)
            assert citation.start is not None and store.exists(citation.path)
        rec = answer.records[0]
        assert rec.calls[0].tool_calls[0].name == "view"  # survey first
        assert rec.calls[1].tool_calls[0].name == "grep"
        clean = _CITE.sub("", answer.text.removeprefix(BASELINE_LABEL))
        scores.append(token_f1(clean, str(q["answer"])))
    f1 = sum(scores) / len(scores)
    print(f"\nLoCoMo conv-26, {len(scores)} questions, offline grep-reader token F1 = {f1:.3f}")
    assert f1 > 0.08


_TIE_SCRIPT = """
from memdir.agents._offline import _chunk_hits
from memdir.tools._ranked import chunk_header
# terms a..d appear on 1, 2, 3 and 7 lines: summed in different orders, their
# weights differ in the last bit (1.8770711884305795 against ...793)
rows = ["alpha beta gamma delta", "beta gamma delta", "gamma delta",
        *(["delta"] * 4), "nothing here"]
text = "\\n".join([chunk_header("/memories/chunks/a.md"), *rows])
hits, _ = _chunk_hits(text, ["alpha", "beta", "gamma", "delta"])
print(repr(hits[0].score), hits[0].line)
"""


def test_chunk_scores_do_not_depend_on_the_hash_seed() -> None:
    # Scores were summed over a set, whose order follows PYTHONHASHSEED, so two
    # runs of the offline smoke study broke a tie between two lines differently.
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        done = subprocess.run([sys.executable, "-c", _TIE_SCRIPT], capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        seen.add(done.stdout.strip())
    assert len(seen) == 1, seen
