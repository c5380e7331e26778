"""Grading without a model: LoCoMo-style token F1, and exact match over PersonaMem's options.

Token F1 is computed the way LoCoMo's own evaluation script computes it
(``task_eval/evaluation.py`` in snap-research/locomo): commas removed, lower
case, punctuation and the words a/an/the/and removed, whitespace tokens, each
token stemmed by NLTK's ``PorterStemmer`` in its default mode (NLTK's
extensions to Porter's algorithm, so ``one`` and ``on`` stay different words).
Multi-hop answers (category 1) are lists: prediction and gold are split at
commas and the score is the mean, over gold parts, of the best F1 against any
predicted part. LoCoMo's open-domain golds (category 3) keep only the text
before the first ``;``. An adversarial item (LoCoMo category 5) scores 1 when
the prediction says the information is absent. A test replays a large set of
(prediction, gold, category) triples built from ``locomo10.json`` and checks
every score against the official script's (``tests/bench/locomo_official.py``
recomputes that set from a LoCoMo checkout).

The judge, not F1, decides correctness in memdir's studies; F1 is a cheap
secondary signal and a comparison point with published numbers computed the
same way (see docs/datasets.md for which are).
"""

from __future__ import annotations

import importlib
import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from memdir.bench._options import chosen_option
from memdir.bench._schema import Question

__all__ = [
    "answer_f1",
    "extract_option",
    "grade_option",
    "multi_answer_f1",
    "normalize_answer",
    "option_correct",
    "token_f1",
]

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_ABSENT = ("no information available", "not mentioned")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    # Imported on first use: nltk takes a while to import and only grading needs it.
    try:
        porter = importlib.import_module("nltk.stem.porter")
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError(
            "token F1 stems words with NLTK's Porter stemmer, as LoCoMo's evaluation "
            "script does; install nltk (uv sync installs it with memdir)"
        ) from exc
    return porter.PorterStemmer()


def normalize_answer(text: str) -> str:
    """LoCoMo's answer normalisation (commas, case, punctuation, a/an/the/and, spaces)."""
    text = text.replace(",", "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list[str]:
    words = normalize_answer(text).split()
    stem = _stemmer().stem
    return [stem(word) for word in words]


def token_f1(prediction: str, gold: str) -> float:
    """F1 of stemmed word overlap between a prediction and a gold answer."""
    predicted, expected = _tokens(prediction), _tokens(gold)
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Mean over the gold's comma-separated parts of the best F1 against any predicted part."""
    predicted = [p.strip() for p in prediction.split(",")]
    expected = [g.strip() for g in gold.split(",")]
    scores = [max(token_f1(p, g) for p in predicted) for g in expected]
    return sum(scores) / len(scores)


def answer_f1(question: Question, prediction: str) -> float:
    """Score a free-text answer to a LoCoMo or REALTALK question the LoCoMo way.

    Raises:
        ValueError: The question is multiple choice (use :func:`grade_option`) or
            has no gold answer.
    """
    if question.options:
        raise ValueError(f"{question.id} is multiple choice; grade it with grade_option")
    if question.benchmark == "locomo" and question.category == 5:
        lowered = prediction.lower()
        return 1.0 if any(phrase in lowered for phrase in _ABSENT) else 0.0
    if question.answer is None:
        raise ValueError(f"{question.id} has no gold answer to compare with")
    gold = question.answer
    if question.category == 1:
        return multi_answer_f1(prediction, gold)
    if question.benchmark == "locomo" and question.category == 3:
        gold = gold.split(";")[0].strip()
    return token_f1(prediction, gold)


def extract_option(answer: str, options: Sequence[str] = ()) -> str | None:
    """The single option ``(a)``..``(h)`` an answer chose, or None.

    The choice is read as the paper's prompts place it, from the first sentence
    that names an option; the rules are in :mod:`memdir.bench._options`. With the
    question's ``options``, an answer that names no letter but repeats one
    option's text chose that option. No choice, a hedge or a refusal give None:
    such an answer is graded wrong.
    """
    return chosen_option(answer, options)


def option_correct(answer: str, gold: str, options: Sequence[str] = ()) -> bool:
    """Exact match of the option an answer chose against a gold like ``(c)``."""
    picked = extract_option(answer, options)
    return picked is not None and picked == gold.strip().lower()


def grade_option(question: Question, answer: str) -> bool:
    """Grade a multiple-choice answer against the question's gold option.

    Raises:
        ValueError: The question has no options or no gold.
    """
    if not question.options or question.answer is None:
        raise ValueError(f"{question.id} is not a multiple-choice question with a gold option")
    return option_correct(answer, question.answer, question.options)
