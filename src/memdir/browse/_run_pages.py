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
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response

from memdir.agents import PriceTable
from memdir.browse._context import Browser
from memdir.browse._sources import chain_store_id, slug
from memdir.browse._state import history_steps
from memdir.skills import CellReport
from memdir.study import (
    CellStatus,
    QuestionRecord,
    RunRecords,
    primary_score,
    score_name,
)

__all__ = ["chain_page", "log_file", "report_figure", "report_page", "run_page", "study_cell_page"]


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


PAGE_SIZE = 25
"""Questions shown per page of a cell."""
WRONG_BELOW = 0.5
"""A question counts as answered wrong below this score (the retrieval diagnostics' rule)."""


@dataclass(frozen=True, slots=True)
class QuestionFilter:
    """Which of a cell's questions a page shows: a category, only the wrong ones, a page."""

    category: str
    wrong: bool
    page: int

    @classmethod
    def of(cls, request: Request) -> QuestionFilter:
        """The filter a cell page's query string asks for (unknown values are ignored)."""
        query = request.query_params
        page = query.get("page", "1")
        return cls(query.get("category", ""), query.get("wrong") == "1",
                   int(page) if page.isdigit() and int(page) > 0 else 1)

    def keep(self, record: QuestionRecord) -> bool:
        """Whether ``record`` passes the category and outcome filters."""
        if self.category and record.category_name != self.category:
            return False
        score = primary_score(record, use_judge=record.grades.judge_correct is not None)
        return not self.wrong or (score is not None and score < WRONG_BELOW)

    def url(self, key: str, **change: Any) -> str:
        """The cell page's URL with this filter, some of it changed."""
        values = {"category": self.category, "wrong": self.wrong, "page": self.page} | change
        query = {k: ("1" if v is True else str(v)) for k, v in values.items()
                 if v not in ("", False, None) and not (k == "page" and v == 1)}
        return f"/run/cell/{key}" + (f"?{urlencode(query)}" if query else "")


def study_cell_page(browser: Browser, request: Request) -> HTMLResponse:
    """A cell's questions: answer, gold, grades, retrieval diagnostics, citations linked.

    The page opens on the cell's scores; its questions come a page at a time,
    filtered by category and to the wrong answers when asked (``?category=``,
    ``?wrong=1``, ``?page=``).
    """
    run = _study(browser)
    key = request.path_params["key"]
    status = next((s for s in run.statuses if s.cell.key == key), None)
    if status is None:
        raise HTTPException(404, f"the run has no cell {key!r}")
    sid = slug(status.store) if status.store else None
    records = run.records.get(key, [])
    wanted = QuestionFilter.of(request)
    kept = [(n, r) for n, r in enumerate(records, 1) if wanted.keep(r)]
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    page = min(wanted.page, pages)
    row = CellRow(status, _pct([primary_score(r) for r in records]),
                  _pct([primary_score(r, use_judge=True) for r in records]),
                  _cost(records, run.prices), None)
    return browser.page(
        "cell.html", run=run, status=status, row=row, records=records,
        shown=kept[(page - 1) * PAGE_SIZE: page * PAGE_SIZE], matching=len(kept),
        page=page, pages=pages, wanted=wanted,
        categories=sorted({r.category_name for r in records}),
        wrong_count=sum(1 for r in records if QuestionFilter("", True, 1).keep(r)),
        score_label=score_name(records),
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


def report_page(browser: Browser, request: Request) -> HTMLResponse:
    """The run's ``report/report.md`` as ``memdir study report`` wrote it, figures shown."""
    catalog = browser.catalog
    _study(browser)
    if catalog.report is None:
        raise HTTPException(404, f"no report yet: write it with `memdir study report "
                                 f"{catalog.folder}`, then reload this page")
    from markdown_it import MarkdownIt

    text = catalog.report.read_text(encoding="utf-8")
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return browser.page("report.html", body=Markup(body), report=catalog.report)


def report_figure(browser: Browser, request: Request) -> Response:
    """A figure of the run's report (a PNG beside ``report.md``)."""
    report = browser.catalog.report
    name = request.path_params["name"]
    if report is None or "/" in name or not name.endswith(".png"):
        raise HTTPException(404, f"{name} is not a figure of this run's report")
    path = report.parent / name
    if not path.is_file():
        raise HTTPException(404, f"{name} is not a figure of this run's report")
    return FileResponse(path, media_type="image/png")
