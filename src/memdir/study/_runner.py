"""``run_study``: build each store once, then run every cell as an inspect_ai eval.

A run folder holds the pinned configuration (``manifest.json``, ``config.yaml``),
the stores (``stores/``), the inspect_ai eval logs (``logs/``, one per cell and
attempt, for ``inspect view``), and per cell a ``status.json``, the list of its
eval logs (``evals.json``) and one JSON record per question
(``cells/<cell>/records/``). Each sample of a cell's eval answers one question
that has no record yet, so a rerun into the same folder resumes where the last
one stopped. A cell is ``complete`` only when every question has a record;
otherwise it is ``failed`` with the reason, and reports leave it out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from memdir.agents import AgentError, PriceTable
from memdir.bench import Conversation, DatasetError, Question
from memdir.runs import eval_failure, note_eval, write_record
from memdir.store import Store
from memdir.study._answer import CellRun, record_path
from memdir.study._config import Cell, StudyConfig
from memdir.study._data import check_data, resolve_data_dir
from memdir.study._inspect import eval_cell
from memdir.study._load import recorded_store
from memdir.study._manifest import write_manifest
from memdir.study._records import CellStatus
from memdir.study._stores import BuilderUnavailable, build_store, cell_input
from memdir.tools import SandboxUnavailableError

__all__ = ["ProgressFn", "cell_dir", "log_dir", "run_study", "run_study_async"]

ProgressFn = Callable[[Cell, int, int], None]
"""Called with (cell, answered so far, questions in the cell)."""

_CELL_ERRORS = (AgentError, BuilderUnavailable, DatasetError, KeyError, SandboxUnavailableError)
"""Errors that fail a cell before its eval starts (the eval reports its own)."""


def cell_dir(out_dir: Path, cell: Cell) -> Path:
    """Where a cell's status, eval list and records live."""
    return out_dir / "cells" / cell.key


def log_dir(out_dir: Path) -> Path:
    """Where a run's inspect_ai eval logs go: ``inspect view --log-dir`` this folder."""
    return out_dir / "logs"


class _Study:
    """One run of a config into a folder: the stores built so far, the models, the prices."""

    def __init__(self, config: StudyConfig, out: Path, data_dir: Path,
                 models: Mapping[str, Model], progress: ProgressFn | None) -> None:
        self.config = config
        self.out = out
        self.data_dir = data_dir
        self.models = models
        self.progress = progress
        self.prices = PriceTable.load(config.prices)
        self.stores: dict[str, Store | None] = {}

    async def store(self, cell: Cell, conversation: Conversation) -> Store | None:
        """The cell's store, built the first time a cell of this run needs it."""
        if cell.store_key not in self.stores:
            root = self.out / "stores"
            store, info = await build_store(cell, conversation, root, self.config,
                                            self.models, self.prices, log_dir=log_dir(self.out))
            if info.path is not None:
                info = info.model_copy(update={"path": recorded_store(info.path, self.out)})
            write_record(root / f"{cell.store_key}.json", info)
            self.stores[cell.store_key] = store
        return self.stores[cell.store_key]

    async def run_cell(self, cell: Cell) -> CellStatus:
        """Answer the cell's unrecorded questions in one eval; write and return its status.

        Raises:
            KeyboardInterrupt: The run was interrupted; the cell's status says so first.
        """
        folder = cell_dir(self.out, cell)
        (folder / "records").mkdir(parents=True, exist_ok=True)
        status = _previous(folder, cell)
        try:
            inputs = cell_input(cell, self.data_dir)
            status = status.model_copy(update={"questions": len(inputs.questions),
                                               "reason": None})
            pending = [(i, q) for i, q in enumerate(inputs.questions)
                       if not record_path(folder, q).exists()]
            if pending:
                store = await self.store(cell, inputs.conversation)
                run = CellRun(cell, self.config, store, self.models, self.prices, folder)
                status = status.model_copy(update={
                    "toolset_digest": run.tools.digest() if run.tools else None})
                log = await self._eval(run, pending, len(inputs.questions))
                note_eval(self.out, folder / "evals.json", log)
                status = status.model_copy(update={"reason": eval_failure(log, "question")})
                if log.status == "cancelled":
                    raise KeyboardInterrupt(status.reason)
        except _CELL_ERRORS as exc:
            status = status.model_copy(update={"reason": f"{type(exc).__name__}: {exc}"})
        except KeyboardInterrupt:
            _finish(folder, status.model_copy(update={
                "reason": status.reason or "interrupted; rerun to resume"}))
            raise
        return _finish(folder, status)

    async def _eval(self, run: CellRun, pending: list[tuple[int, Question]],
                    total: int) -> EvalLog:
        done = total - len(pending)
        progress = self.progress
        if progress is not None:
            progress(run.cell, done, total)

        def answered(question: Question) -> None:
            nonlocal done
            done += 1
            if progress is not None:
                progress(run.cell, done, total)

        return await eval_cell(run, pending, log_dir(self.out), answered)


def _finish(folder: Path, status: CellStatus) -> CellStatus:
    """Count the cell's records, settle complete or failed, and write ``status.json``."""
    answered = sum(1 for _ in (folder / "records").glob("*.json"))
    if status.reason is None and answered < status.questions:
        status = status.model_copy(update={"reason": "not every question has a record"})
    status = status.model_copy(update={
        "answered": answered, "status": "failed" if status.reason else "complete"})
    write_record(folder / "status.json", status)
    return status


def _previous(folder: Path, cell: Cell) -> CellStatus:
    """The cell's status from an earlier run into the folder, else a pending one."""
    path = folder / "status.json"
    if path.exists():
        return CellStatus.model_validate_json(path.read_text("utf-8"))
    return CellStatus(cell=cell, status="pending", store=cell.store_key)


async def run_study_async(
    config: StudyConfig, out_dir: str | Path, *, models: Mapping[str, Model] | None = None,
    progress: ProgressFn | None = None, data_dir: str | Path | None = None,
) -> list[CellStatus]:
    """Run (or resume) every cell of ``config`` into ``out_dir``.

    Every benchmark file is loaded and every conversation resolved before the first
    cell runs (:func:`memdir.study.check_data`), so bad data stops the run at once.

    Args:
        config: The study.
        out_dir: The run folder; an existing run there is resumed.
        models: Configured inspect_ai models to use for some model names (tests pass
            scripted ``mockllm/model`` instances here); other names are resolved as usual.
        progress: Called as each cell starts and after each answered question.
        data_dir: The benchmark folder; before ``MEMDIR_DATA_DIR`` and the config's.

    Returns:
        The status of every cell, in config order.

    Raises:
        memdir.study.DataError: No benchmark folder, or its files miss or break
            something the cells need.
        ValueError: ``out_dir`` holds a run of a different config.
    """
    out = Path(out_dir)
    data_dir = check_data(config, resolve_data_dir(config, data_dir)).folder
    cells = config.cells()
    write_manifest(config, cells, out, data_dir)
    study = _Study(config, out, data_dir, models or {}, progress)
    return [await study.run_cell(cell) for cell in cells]


def run_study(config: StudyConfig, out_dir: str | Path, *,
              models: Mapping[str, Model] | None = None,
              progress: ProgressFn | None = None,
              data_dir: str | Path | None = None) -> list[CellStatus]:
    """Synchronous wrapper of :func:`run_study_async`."""
    return asyncio.run(run_study_async(config, out_dir, models=models, progress=progress,
                                       data_dir=data_dir))

