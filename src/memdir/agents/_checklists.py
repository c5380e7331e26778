"""Each prompt's checklist: the paper's contract points beside the lines that carry them.

A checklist is ``prompts/checklists/<family>.yaml``. It names the prompts of one
family, each with the harnesses it is sent under, and lists the contract points
the paper's text sets for them: where in the paper (``section``), the point in
our words (``point``), and ``text``, a passage of our prompt that carries it.
``text`` is one passage for every harness, or a map from harness (or
``default``) to the passage that harness's wording uses; ``only`` limits a point
to some of the family's prompts. A top-level ``groups`` map may name lists of
prompts once, for YAML anchors (``only: *tree``).

:func:`check_checklists` renders every listed prompt under every listed harness
(:func:`memdir.agents.load_prompt`, the text as sent) and reports each point
whose passage is not in it, so a checklist can only claim what the prompt says.
Whitespace is compared loosely (runs of spaces and line breaks count as one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from memdir.agents._prompts import load_prompt, prompt_fields
from memdir.tools._harness import DEFAULT_HARNESS, harness_prompt, harness_spec

__all__ = ["Checklist", "ChecklistPoint", "Gap", "check_checklists", "load_checklists",
           "parse_checklist", "rendered"]

_KEYS = frozenset({"family", "paper", "prompts", "points", "groups"})
_POINT_KEYS = frozenset({"section", "point", "text", "only"})

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ChecklistPoint:
    """One contract point of the paper and the passage of ours that carries it."""

    section: str
    point: str
    text: dict[str, str]
    """Harness (or ``default``) -> the passage."""
    only: tuple[str, ...] = ()
    """The family's prompts this point applies to (empty: all of them)."""

    def passage(self, harness: str) -> str:
        """The passage to look for under ``harness``.

        Raises:
            ValueError: The point names no passage for ``harness`` and no default.
        """
        try:
            return self.text.get(harness) or self.text["default"]
        except KeyError:
            raise ValueError(f"checklist point {self.point!r} names no text for {harness} "
                             "and no default") from None

    def applies_to(self, prompt: str) -> bool:
        """Whether the point binds ``prompt``."""
        return not self.only or prompt in self.only


@dataclass(frozen=True)
class Checklist:
    """One prompt family's checklist."""

    family: str
    paper: str
    prompts: dict[str, tuple[str, ...]]
    """Prompt -> the harnesses it is checked under."""
    points: tuple[ChecklistPoint, ...]


@dataclass(frozen=True)
class Gap:
    """A point whose passage the rendered prompt lacks."""

    family: str
    prompt: str
    """The prompt as sent (``<prompt>@<harness>`` off Center)."""
    section: str
    point: str
    passage: str


def _folder() -> resources.abc.Traversable:
    return resources.files("memdir.agents").joinpath("prompts", "checklists")


def _point(family: str, raw: Any) -> ChecklistPoint:
    if not isinstance(raw, dict) or not {"section", "point", "text"} <= raw.keys():
        raise ValueError(f"checklist {family}: each point needs section, point and text; "
                         f"got {raw!r}")
    if raw.keys() - _POINT_KEYS:
        raise ValueError(f"checklist {family}: a point has unknown keys "
                         f"{sorted(raw.keys() - _POINT_KEYS)}; use {sorted(_POINT_KEYS)}")
    text = raw["text"]
    passages = {"default": text} if isinstance(text, str) else dict(text)
    only = raw.get("only", [])
    return ChecklistPoint(str(raw["section"]), str(raw["point"]),
                          {str(k): str(v) for k, v in passages.items()},
                          tuple(str(p) for p in only))


def parse_checklist(name: str, raw: Any) -> Checklist:
    """A checklist from its parsed YAML (``name`` is for messages).

    Raises:
        ValueError: A field is missing or unknown, a harness is unknown, or a
            point is limited to a prompt the checklist does not list.
    """
    if not isinstance(raw, dict) or not {"family", "paper", "prompts", "points"} <= raw.keys():
        raise ValueError(f"checklist {name}: needs family, paper, prompts and points")
    if raw.keys() - _KEYS:
        raise ValueError(f"checklist {name}: unknown keys {sorted(raw.keys() - _KEYS)}; "
                         f"use {sorted(_KEYS)}")
    family = str(raw["family"])
    prompts = {str(p): tuple(str(h) for h in hs) for p, hs in raw["prompts"].items()}
    for harnesses in prompts.values():
        for harness in harnesses:
            harness_spec(harness)  # an unknown harness is a typo: say so
    points = tuple(_point(family, p) for p in raw["points"])
    for point in points:
        unknown = set(point.only) - prompts.keys()
        if unknown:
            raise ValueError(f"checklist {family}: point {point.point!r} names prompts the "
                             f"checklist does not list: {sorted(unknown)}")
    return Checklist(family, str(raw["paper"]), prompts, points)


@cache
def load_checklists() -> tuple[Checklist, ...]:
    """Every checklist shipped with memdir, by file name.

    Raises:
        ValueError: A checklist lacks a field, names an unknown harness, or limits
            a point to a prompt it does not list.
    """
    import yaml

    found = []
    for node in sorted(_folder().iterdir(), key=lambda n: n.name):
        if node.name.endswith(".yaml"):
            found.append(parse_checklist(node.name, yaml.safe_load(node.read_text("utf-8"))))
    return tuple(found)


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def rendered(prompt: str, harness: str = DEFAULT_HARNESS) -> str:
    """``prompt`` as sent under ``harness``, its fields left as ``{field}``."""
    name = harness_prompt(prompt, harness)
    return load_prompt(name, **{f: "{" + f + "}" for f in prompt_fields(name)}).text


def check_checklists(checklists: tuple[Checklist, ...] | None = None) -> list[Gap]:
    """Every point, prompt and harness whose passage the rendered prompt lacks.

    Args:
        checklists: The checklists to check; the shipped ones by default.
    """
    gaps = []
    for checklist in load_checklists() if checklists is None else checklists:
        for prompt, harnesses in checklist.prompts.items():
            for harness in harnesses:
                text = _flat(rendered(prompt, harness))
                for point in checklist.points:
                    if not point.applies_to(prompt):
                        continue
                    passage = point.passage(harness)
                    if _flat(passage) not in text:
                        gaps.append(Gap(checklist.family, harness_prompt(prompt, harness),
                                        point.section, point.point, passage))
    return gaps
