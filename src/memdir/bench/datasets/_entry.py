"""What the study needs to know of a benchmark, declared by the benchmark's own loader.

Each loader module declares one :class:`BenchmarkEntry`: where its files sit in a
data folder, how they load, how answers are graded, which locator form its
conversations use, its context tiers, and which questions a study cell asks of a
conversation (with the part of it those questions see). The catalog in
:mod:`memdir.bench.datasets` lists the entries, one line each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memdir.bench._schema import Dataset, Question
from memdir.conversation import Conversation, LocatorKind

__all__ = ["BenchmarkEntry", "Grading", "all_questions"]

Grading = Literal["token-f1", "option"]
"""How an answer is graded without a model: LoCoMo's token F1, or the option it picks."""

CellQuestions = Callable[[Dataset, str], tuple[Conversation, list[Question]]]


def all_questions(dataset: Dataset, conversation_id: str) -> tuple[Conversation, list[Question]]:
    """The whole conversation, and every evaluated question about it."""
    return dataset.conversation(conversation_id), dataset.questions_for(conversation_id)


@dataclass(frozen=True)
class BenchmarkEntry:
    """One benchmark of the conversational study."""

    name: str
    files: Callable[[Path, str], list[Path]]
    """The files a tier of the benchmark reads under a data folder (the tier is ignored
    by a benchmark without tiers)."""
    load: Callable[[Sequence[Path]], Dataset]
    """Load the files :attr:`files` names, in that order."""
    grading: Grading
    locator: LocatorKind
    tiers: tuple[str, ...] = ()
    """Context tiers that make separate cells (none: one dataset)."""
    default_tier: str | None = None
    cell_questions: CellQuestions = all_questions
    """The conversation a cell's store holds and the questions the cell asks of it."""

    def paths(self, data_dir: str | Path, tier: str | None = None) -> list[Path]:
        """Where the files of ``tier`` (the default tier if None) are under ``data_dir``."""
        return self.files(Path(data_dir).expanduser(), tier or self.default_tier or "")
