"""``run_study``: build each store once, answer every question of every cell, grade, record.

A run folder holds the pinned configuration (``manifest.json``, ``config.yaml``),
the stores (``stores/``), and per cell a ``status.json`` and one JSON record per
question (``cells/<cell>/records/``). A rerun into the same folder skips every
question that already has a record, so an interrupted run resumes where it stopped.
A cell is ``complete`` only when every question has a record; otherwise it is
``failed`` with the reason, and reports leave it out.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from inspect_ai.model import Model

from memdir.agents import AgentError, PriceTable, ask
from memdir.bench import DatasetError, Question, is_defective
from memdir.config import get_settings
from memdir.store import Store
from memdir.study._config import Cell, ConfigError, StudyConfig
from memdir.study._diagnostics import cited_locators, replay_reads
from memdir.study._grading import grade_answer, judge_answer
from memdir.study._manifest import write_manifest
from memdir.study._records import CellStatus, QuestionRecord, StoreInfo
from memdir.study._roles import ASK_VARIANT, search_role
from memdir.study._stores import BuilderUnavailable, build_store, cell_input
from memdir.tools import SandboxUnavailableError, ToolSet, make_toolset

__all__ = ["ProgressFn", "cell_dir", "run_study", "resolve_data_dir", "run_study_async"]

ProgressFn = Callable[[Cell, int, int], None]
"""Called with (cell, answered so far, questions in the cell)."""

_CELL_ERRORS = (AgentError, BuilderUnavailable, DatasetError, KeyError, SandboxUnavailableError)


def cell_dir(out_dir: Path, cell: Cell) -> Path:
    """Where a cell's status and records live."""
    return out_dir / "cells" / cell.key


def _record_path(folder: Path, question: Question) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in question.id)
    return folder / "records" / f"{safe}.json"


class _CellRun:
    """Everything needed to answer one cell's questions."""

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

    def model(self, name: str) -> Model | str:
        return self.models.get(name, name)

    async def answer(self, question: Question, judged: bool) -> QuestionRecord:
        start = time.perf_counter()
        answer = await ask(self.store, _question_text(question),
                           self.model(self.cell.search_model),
                           variant=ASK_VARIANT[self.cell.variant], role=self.role,
                           prices=self.prices)
        wall = time.perf_counter() - start
        episode = answer.records[0]
        reads, seen = await replay_reads(episode, self.tools)
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
            usage=answer.usage, cost=answer.cost, rounds=episode.rounds,
            tool_calls=episode.tool_call_count, tool_errors=episode.tool_errors,
            budget_exhausted=episode.budget_exhausted,
            zero_cost_baseline=answer.zero_cost_baseline, wall_s=wall, reads=reads,
            evidence_seen=sorted(evidence & seen),
            evidence_cited=sorted(evidence & cited_locators(answer.citations)),
            grades=grades, episode=episode,
        )


def _question_text(question: Question) -> str:
    if not question.options:
        return question.text
    return question.text + "\n\nOptions:\n" + "\n".join(question.options)


async def _run_cell(cell: Cell, config: StudyConfig, out_dir: Path, data_dir: Path,
                    stores: dict[str, tuple[Store | None, StoreInfo]],
                    models: Mapping[str, Model], prices: PriceTable,
                    progress: ProgressFn | None) -> CellStatus:
    folder = cell_dir(out_dir, cell)
    (folder / "records").mkdir(parents=True, exist_ok=True)
    status = CellStatus(cell=cell, status="pending", store=cell.store_key)
    try:
        inputs = cell_input(cell, data_dir)
        status = status.model_copy(update={"questions": len(inputs.questions)})
        if cell.store_key not in stores:
            stores[cell.store_key] = await build_store(
                cell, inputs.conversation, out_dir / "stores", config, models, prices)
            _write_json(out_dir / "stores" / f"{cell.store_key}.json",
                        stores[cell.store_key][1].model_dump(mode="json"))
        run = _CellRun(cell, config, stores[cell.store_key][0], models, prices, folder)
        status = status.model_copy(update={
            "toolset_digest": run.tools.digest() if run.tools else None})
        await _answer_all(run, inputs.questions, progress)
    except _CELL_ERRORS as exc:
        status = status.model_copy(update={"status": "failed",
                                           "reason": f"{type(exc).__name__}: {exc}"})
    answered = sum(1 for q in _existing(folder))
    if status.status != "failed":
        done = answered >= status.questions
        status = status.model_copy(update={
            "status": "complete" if done else "failed",
            "reason": None if done else "not every question has a record"})
    status = status.model_copy(update={"answered": answered})
    _write_json(folder / "status.json", status.model_dump(mode="json"))
    return status


def _existing(folder: Path) -> list[Path]:
    return sorted((folder / "records").glob("*.json"))


async def _answer_all(run: _CellRun, questions: list[Question],
                      progress: ProgressFn | None) -> None:
    semaphore = asyncio.Semaphore(run.config.concurrency)
    limit = run.config.judge.limit
    done = sum(1 for q in questions if _record_path(run.folder, q).exists())

    async def one(index: int, question: Question) -> None:
        nonlocal done
        path = _record_path(run.folder, question)
        if path.exists():
            return
        async with semaphore:
            record = await run.answer(question, limit is None or index < limit)
        _write_json(path, record.model_dump(mode="json"))
        done += 1
        if progress is not None:
            progress(run.cell, done, len(questions))

    results = await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)),
                                   return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        raise errors[0]


def resolve_data_dir(config: StudyConfig) -> Path:
    """The benchmark folder: the config's ``data_dir``, else ``MEMDIR_DATA_DIR``.

    Raises:
        ConfigError: Neither is set.
    """
    found = config.data_dir or get_settings().data_dir
    if found is None:
        raise ConfigError("no benchmark folder: set data_dir in the config or MEMDIR_DATA_DIR")
    return Path(found).expanduser()


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


async def run_study_async(
    config: StudyConfig, out_dir: str | Path, *, models: Mapping[str, Model] | None = None,
    progress: ProgressFn | None = None,
) -> list[CellStatus]:
    """Run (or resume) every cell of ``config`` into ``out_dir``.

    Args:
        config: The study.
        out_dir: The run folder; an existing run there is resumed.
        models: Configured inspect_ai models to use for some model names (tests pass
            scripted ``mockllm/model`` instances here); other names are resolved as usual.
        progress: Called after each answered question.

    Returns:
        The status of every cell, in config order.
    """
    out = Path(out_dir)
    data_dir = resolve_data_dir(config)
    cells = config.cells()
    write_manifest(config, cells, out, data_dir)
    prices = PriceTable.load(config.prices)
    stores: dict[str, tuple[Store | None, StoreInfo]] = {}
    statuses = []
    for cell in cells:
        statuses.append(await _run_cell(cell, config, out, data_dir, stores, models or {},
                                        prices, progress))
    return statuses


def run_study(config: StudyConfig, out_dir: str | Path, *,
              models: Mapping[str, Model] | None = None,
              progress: ProgressFn | None = None) -> list[CellStatus]:
    """Synchronous wrapper of :func:`run_study_async`."""
    return asyncio.run(run_study_async(config, out_dir, models=models, progress=progress))
