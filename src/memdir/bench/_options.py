"""Which option a multiple-choice answer chose (PersonaMem's exact match).

The paper grades PersonaMem by exact match over the options, with no judge, and
its search prompts fix where the choice is stated: the answer's first sentence
names the chosen option, and the evidence follows. So the choice is read from the
first sentence that names an option, not from every letter in the text: an answer
that picks (b) and then explains that (a) was the earlier preference chose (b).
The rules, in order:

1. An answer that is only a letter (``b``, ``B.``, ``(b)``) chose it.
2. Option mentions are ``(b)``, ``b)`` opening a line, and ``option b`` /
   ``answer: b`` / ``choice b``. The deciding sentence is the first sentence
   (ended by ``.``, ``!``, ``?`` or a line break) that holds one.
3. In that sentence, a mention that is negated (``not (a)``, ``rather than
   (a)``, ``instead of (a)``, ``over (a)``, ``nor (a)``) is not a choice. Two
   letters joined as alternatives (``(a) or (b)``, ``(a)/(b)``, ``(a) and
   (b)``) are a hedge: no choice. One remaining letter is the choice; several
   are a choice only when the sentence opens with one of them (the answer
   stated first, as the prompts ask), else none. A sentence that only rules
   options out (``Not (a).``) decides nothing: the next one is read.
4. An answer that names no letter at all chose the option whose own text
   (without its letter; case, punctuation and spacing ignored) it contains, if
   exactly one option's text is there (an option whose text is part of another
   found option's text does not count).
5. Anything else (no option, an undecidable sentence, a refusal) chose nothing,
   and is graded wrong.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

__all__ = ["chosen_option"]

_LETTERS = "a-h"
_MENTION = re.compile(
    rf"\(([{_LETTERS}])\)"
    rf"|^[\s*_>#-]*([{_LETTERS}])\)"
    rf"|\b(?:option|choice)\s*[:\-]?\s*(?:\(?([{_LETTERS}])(?=\)|[.,:;!?]|\s*$|\s+[-–—(\[])"
    r"|(?-i:([A-H]))\b(?!['’\w]))"
    rf"|\banswer\s*(?:is\s*)?[:\-]?\s*\(?([{_LETTERS}])(?=\)|[.,:;!?]|\s*$|\s+[-–—])",
    re.IGNORECASE,
)
_BARE = re.compile(rf"^[\s*_>#(\[]*([{_LETTERS}])[\s*_)\].:!]*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_NEGATION = re.compile(r"(?:\bnot|\brather than|\binstead of|\bover|\bnor|\bneither|"
                       r"\bunlike|\bexcept)\s*(?:option\s*)?\W*$", re.IGNORECASE)
_JOIN = re.compile(r"^\s*(?:or|and|/|&)\s*$", re.IGNORECASE)
_OPENING = re.compile(r"^[\s*_>#\"'“]*(?:(?:the\s+)?(?:final\s+)?(?:answer|choice|option)"
                      r"\s*(?:is)?\s*[:\-]?\s*)?$", re.IGNORECASE)
_LEADING_LETTER = re.compile(rf"^\s*\(([{_LETTERS}])\)\s*", re.IGNORECASE)
_PUNCT = str.maketrans(string.punctuation + "’‘“”", " " * (len(string.punctuation) + 4))


def _normal(text: str) -> str:
    return " ".join(text.lower().translate(_PUNCT).split())


def _mentions(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), next(g for g in m.groups() if g).lower())
            for m in _MENTION.finditer(text)]


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


_ONLY_NEGATED = ""
"""What :func:`_decide` returns for a sentence whose every mention is negated."""


def _decide(sentence: str, found: list[tuple[int, int, str]]) -> str | None:
    for (_, end, _), (start, _, _) in zip(found, found[1:], strict=False):
        if _JOIN.match(sentence[end:start]):
            return None  # "(a) or (b)": a hedge names no single choice
    kept = [(start, letter) for start, _, letter in found
            if not _NEGATION.search(sentence[:start])]
    if not kept:
        return _ONLY_NEGATED
    letters = {letter for _, letter in kept}
    if len(letters) == 1:
        return letters.pop()
    if kept and _OPENING.match(sentence[:kept[0][0]]):
        return kept[0][1]
    return None


def _by_text(answer: str, options: Sequence[str]) -> str | None:
    said = _normal(answer)
    hits: dict[str, str] = {}
    for index, option in enumerate(options):
        own = _normal(_LEADING_LETTER.sub("", option))
        if own and own in said:
            hits[chr(ord("a") + index)] = own
    # An option whose text lies inside another found option's text was not the one repeated.
    whole = [k for k, own in hits.items()
             if not any(own != other and own in other for other in hits.values())]
    return whole[0] if len(whole) == 1 else None


def chosen_option(answer: str, options: Sequence[str] = ()) -> str | None:
    """The option ``answer`` chose, as ``(b)``, or None when it chose none (see module doc).

    Args:
        answer: The search agent's answer.
        options: The question's options (``(a) ...`` or bare texts), used only when
            the answer names no letter.
    """
    bare = _BARE.match(answer)
    if bare:
        return f"({bare.group(1).lower()})"
    for sentence in _sentences(answer):
        alone = _BARE.match(sentence)
        if alone:  # "B." on a line of its own, then the reasons
            return f"({alone.group(1).lower()})"
        found = _mentions(sentence)
        if found:
            letter = _decide(sentence, found)
            if letter == _ONLY_NEGATED:  # "Not (a)." rules one out; read on
                continue
            return None if letter is None else f"({letter})"
    letter = _by_text(answer, options) if options else None
    return None if letter is None else f"({letter})"
