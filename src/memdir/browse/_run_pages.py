"""The run view: a study run's cells and questions, or a skills run's chains and tasks.

Everything here is read from the records through the public loaders; a citation
opens the cited lines in the store view, and each cell links to its inspect log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response

from memdir.agents import PriceTable
from memdir.browse._context import Browser
from memdir.browse._sources import chain_store_id, slug
from memdir.browse._state import history_steps
from memdir.skills import CellReport
from memdir.study import CellStatus, QuestionRecord, RunRecords, primary_score

__all__ = ["chain_page", "log_file", "run_page", "study_cell_page"]


@dataclass(frozen=True, slots=True)
class CellRow:
    """One line of the cells table."""

    status: CellStatus
    score: float | None
    judged: float | None
    cost: float | None
    store_id: str | None


def _pct(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return 100 * mean(present) if present else None


def _cost(records: list[QuestionRecord], prices: PriceTable) -> float | None:
    costs = [r.cost(prices) for r in records]
    if not costs or any(c is None for c in costs):
        return None
    return sum(c for c in costs if c is not None)


def _study(browser: Browser) -> RunRecords:
    run = browser.catalog.study
    if run is None:
        raise HTTPException(404, "this session shows no study run")
    return run


def _cell_rows(browser: Browser, run: RunRecords) -> list[CellRow]:
    rows = []
    for status in run.statuses:
        records = run.records.get(status.cell.key, [])
        sid = slug(status.store) if status.store else None
        rows.append(CellRow(
            status,
            _pct([primary_score(r) for r in records]),
            _pct([primary_score(r, use_judge=True) for r in records]),
            _cost(records, run.prices),
            sid if sid in browser.catalog.stores else None,
        ))
    return rows


def _logs(folder: Path, key: str) -> list[dict[str, Any]]:
    """The inspect logs of a cell, from its ``evals.json``."""
    path = folder / "cells" / key / "evals.json"
    if not path.is_file():
        return []
    entries = json.loads(path.read_text("utf-8"))
    return [e for e in entries if isinstance(e, dict) and e.get("log")]


def run_page(browser: Browser, request: Request) -> HTMLResponse:
    """The run's cells with their scores and cost (study), or chains and tasks (skills)."""
    catalog = browser.catalog
    if catalog.skills is not None:
        return browser.page("skills.html", cells=catalog.skills, chain_store_id=chain_store_id)
    run = _study(browser)
    return browser.page("run.html", run=run, rows=_cell_rows(browser, run))


def study_cell_page(browser: Browser, request: Request) -> HTMLResponse:
    """A cell's questions: answer, gold, grades, retrieval diagnostics, citations linked."""
    run = _study(browser)
    key = request.path_params["key"]
    status = next((s for s in run.statuses if s.cell.key == key), None)
    if status is None:
        raise HTTPException(404, f"the run has no cell {key!r}")
    sid = slug(status.store) if status.store else None
    records = run.records.get(key, [])
    return browser.page(
        "cell.html", run=run, status=status, records=records,
        store_id=sid if sid in browser.catalog.stores else None,
        logs=_logs(run.folder, key), log_dir=run.folder / "logs", primary_score=primary_score,
    )


def log_file(browser: Browser, request: Request) -> Response:
    """Download a cell's inspect log (open it with ``inspect view``)."""
    run = _study(browser)
    key = request.path_params["key"]
    logs = _logs(run.folder, key)
    index = int(request.path_params["n"])
    if not 0 <= index < len(logs):
        raise HTTPException(404, f"cell {key!r} has {len(logs)} log(s)")
    path = (run.folder / logs[index]["log"]).resolve()
    if not path.is_file() or run.folder.resolve() not in path.parents:
        raise HTTPException(404, f"{logs[index]['log']} is not a log file inside the run")
    return FileResponse(path, filename=path.name)


def chain_page(browser: Browser, request: Request) -> HTMLResponse:
    """A skills chain: each task's outcome, what retrieval served, the store after it."""
    cells = browser.catalog.skills
    if cells is None:
        raise HTTPException(404, "this session shows no skills run")
    cell_id, chain = request.path_params["cell"], request.path_params["chain"]
    report: CellReport | None = next((c for c in cells if c.cell.key == cell_id), None)
    if report is None or chain not in report.chains:
        raise HTTPException(404, f"the run has no chain {cell_id}/{chain}")
    sid = chain_store_id(cell_id, chain)
    entry = browser.catalog.stores.get(sid)
    after: dict[str, int] = {}
    if entry is not None:
        after = {s.commit: s.index for s in history_steps(browser, entry)}
    return browser.page("chain.html", report=report, chain=chain, steps=report.chains[chain],
                        store_id=sid if entry is not None else None, after=after,
                        planned=report.planned.get(chain))
