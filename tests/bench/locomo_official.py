"""(prediction, gold, category) triples from locomo10.json, and the official scores of them.

:func:`triples` builds, for every LoCoMo question, a fixed set of predictions
meant to probe the grader: the gold itself, inflected word forms (where Porter
stemmers differ), a reordered list, a hedged sentence around the gold, another
question's gold, and absence phrasings. Nothing random: the same file always
gives the same triples.

Run as a script with the path of LoCoMo's own ``task_eval/evaluation.py`` (from
a checkout of snap-research/locomo, branch ``code``; not part of memdir) to
score every triple with the official functions and write
``fixtures/locomo_official_f1.json``, which the grading test compares against::

    uv run python tests/bench/locomo_official.py --official PATH/evaluation.py \
        --data ../shared/data/locomo/locomo10.json

The fixture holds only scores, in the rows' order, and a digest of the rows' keys:
no LoCoMo text.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_official_f1.json"

_SUFFIXES = ("s", "ing", "ed", "ly", "ies", "e")


def _inflect(text: str, suffix: str) -> str:
    return " ".join(w + suffix if w.isalpha() and len(w) > 2 else w for w in text.split())


def _predictions(gold: str, other: str) -> Iterator[tuple[str, str]]:
    yield "verbatim", gold
    for suffix in _SUFFIXES:
        yield f"inflect-{suffix}", _inflect(gold, suffix)
    parts = [p.strip() for p in gold.split(",")]
    yield "reversed-list", ", ".join(reversed(parts))
    yield "hedged", f"I believe it was {gold}, as far as the notes say."
    yield "first-word", gold.split()[0] if gold.split() else ""
    yield "other-gold", other
    yield "mixed", f"{other}, {gold}"
    yield "absent", "Not mentioned in the conversation."
    yield "no-info", "There is no information available about that."
    yield "one-on", gold.replace(" one ", " on ").replace(" on ", " one ")
    yield "empty", ""


def _gold(qa: dict[str, Any]) -> str:
    value = qa.get("answer", qa.get("adversarial_answer", ""))
    return str(value)


def triples(data: Path) -> Iterator[tuple[str, str, str, str, int]]:
    """(key, prediction, gold, conversation id, category) for every probe of every question."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    for sample in samples:
        qas = sample["qa"]
        for index, qa in enumerate(qas, start=1):
            gold = _gold(qa)
            other = _gold(qas[index % len(qas)])
            for kind, prediction in _predictions(gold, other):
                key = f"{sample['sample_id']}/q{index:03d}/{kind}"
                yield key, prediction, gold, sample["sample_id"], int(qa["category"])


def keys_digest(rows: list[tuple[str, str, str, str, int]]) -> str:
    """SHA-256 of the rows' keys in order: the fixture's scores belong to exactly these rows."""
    return hashlib.sha256("\n".join(row[0] for row in rows).encode("utf-8")).hexdigest()


def _official(path: Path) -> types.ModuleType:
    # The official module imports bert_score at the top for a metric F1 does not use.
    sys.modules.setdefault("bert_score", types.SimpleNamespace(score=None))  # type: ignore[arg-type]
    spec = importlib.util.spec_from_file_location("locomo_evaluation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def official_scores(module: types.ModuleType,
                    rows: list[tuple[str, str, str, str, int]]) -> list[float]:
    """Score every row with the official ``eval_question_answering``, in order."""
    lines = [{"prediction": p, "answer": g, "category": c, "evidence": []}
             for _, p, g, _, c in rows]
    with tempfile.TemporaryDirectory() as tmp:
        infile = Path(tmp) / "qa.json"
        infile.write_text(json.dumps({"qa": lines}), encoding="utf-8")
        scores, _, _ = module.eval_question_answering(str(infile), eval_key="prediction")
    return [float(x) for x in scores]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    args = parser.parse_args()
    module = _official(args.official)
    rows = list(triples(args.data))
    scores = [round(x, 6) for x in official_scores(module, rows)]
    fixture = {"count": len(rows), "keys_sha256": keys_digest(rows), "scores": scores}
    FIXTURE.write_text(json.dumps(fixture, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {len(scores)} official scores to {FIXTURE}")


if __name__ == "__main__":
    main()
