"""One cell's question work: ask, replay the reads, grade, judge, and write the record.

:class:`CellRun` holds what answering needs (the cell's store, search role, tools,
models and prices) and knows where each question's record lives, so the study's
inspect_ai solver does nothing but call :meth:`CellRun.answer` and
:meth:`CellRun.write`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from inspect_ai.model import Model

from memdir.agents import PriceTable, ask, resolve_model
from memdir.bench import Question, is_defective
from memdir.runs import write_record
from memdir.store import Store
from memdir.study._config import Cell, StudyConfig
from memdir.study._diagnostics import cited_locators, episode_reads
from memdir.study._grading import grade_answer, judge_answer
from memdir.study._records import QuestionRecord
from memdir.study._roles import ASK_VARIANT, search_role
from memdir.tools import ToolSet, make_toolset

__all__ = ["CellRun", "question_text", "record_path"]


def question_text(question: Question) -> str:
    """The question as the search agent reads it (multiple-choice options appended)."""
    if not question.options:
        return question.text
    return question.text + "\n\nOptions:\n" + "\n".join(question.options)


def record_path(folder: Path, question: Question | str) -> Path:
    """Where a cell folder holds the record of a question (or of a question id)."""
    qid = question if isinstance(question, str) else question.id
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in qid)
    return folder / "records" / f"{safe}.json"


class CellRun:
    """Everything needed to answer, grade and record one cell's questions."""

    def __init__(self, cell: Cell, config: StudyConfig, store: Store | None,
                 models: Mapping[str, Model], prices: PriceTable, folder: Path) -> None:
        self.cell = cell
        self.config = config
        self.store = store
        self.models = models
        self.prices = prices
        self.folder = folder
        self.role = search_role(cell, config)
        self.tools: ToolSet | None = (
            make_toolset(self.role.toolset, store)
            if self.role.toolset is not None and store is not None else None
        )
        self._resolved: dict[str, Model] = {}

    def model(self, name: str) -> Model:
        """The configured model of that name, else the name resolved with memdir's retries.

        Raises:
            ValueError: The name is not ``provider/model`` or names an unknown provider.
        """
        if name not in self._resolved:
            self._resolved[name] = self.models.get(name) or resolve_model(name)
        return self._resolved[name]

    def record_path(self, question: Question) -> Path:
        """Where the question's record is (or will be) written."""
        return record_path(self.folder, question)

    def recorded(self) -> int:
        """How many of the cell's questions have a record."""
        return sum(1 for _ in (self.folder / "records").glob("*.json"))

    def judged(self, index: int) -> bool:
        """Whether the judge grades the cell's ``index``-th question (0-based)."""
        limit = self.config.judge.limit
        return self.config.judge.model is not None and (limit is None or index < limit)

    def write(self, record: QuestionRecord, question: Question) -> None:
        """Store the question's record; from now on a rerun skips the question."""
        write_record(self.record_path(question), record)

    async def answer(self, question: Question, judged: bool) -> QuestionRecord:
        """Ask the cell's search agent, read what it saw, grade (and judge) the answer.

        Raises:
            memdir.agents.AgentError: The search or judge model failed after retries.
        """
        start = time.perf_counter()
        answer = await ask(self.store, question_text(question),
                           self.model(self.cell.search_model),
                           variant=ASK_VARIANT[self.cell.variant], role=self.role,
                           prices=self.prices)
        wall = time.perf_counter() - start
        episode = answer.records[0]
        reads, seen = await episode_reads(episode, self.tools)
        evidence = set(question.evidence)
        grades = grade_answer(question, answer.text)
        judge = self.config.judge
        if judged and judge.model is not None:
            grades = await judge_answer(grades, question, answer.text, self.store, judge,
                                        self.model(judge.model), self.prices)
        return QuestionRecord(
            cell=self.cell.key, question_id=question.id, order=question.order,
            category=question.category, category_name=question.category_name,
            question=question.text, gold=question.answer,
            defective_gold=is_defective(question), evidence=list(question.evidence),
            answer=answer.text, citations=[c.model_dump(mode="json", exclude={"content"})
                                           for c in answer.citations],
            wall_s=wall, reads=reads,
            evidence_seen=sorted(evidence & seen),
            evidence_cited=sorted(evidence & cited_locators(answer.citations)),
            grades=grades, episode=episode,
        )
