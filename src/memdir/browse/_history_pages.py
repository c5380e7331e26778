"""The history view: a timeline of snapshots, the tree at a step, its diff, growth curves."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

from memdir.browse._charts import GROWTH, Chart, growth_chart
from memdir.browse._context import Browser
from memdir.browse._sources import BrowsedStore
from memdir.browse._state import StoreState, history_steps
from memdir.browse._tree import HEADINGS_FILES, build_nodes
from memdir.metrics import Trajectory, measure_history
from memdir.store import ROOT
from memdir.store.history import History, HistoryError, StateDiff, Step

__all__ = ["MAX_PATCH_LINES", "GrowthJob", "history_page", "trajectory_of"]

MAX_PATCH_LINES = 3000
"""A step's diff is shown up to this many lines; the page says how many were left out."""


@dataclass(frozen=True, slots=True)
class PatchLine:
    """One line of a unified diff, with its kind for styling."""

    kind: str
    text: str
    path: str | None = None


@dataclass
class GrowthJob:
    """The growth table of one history, measured in a background thread."""

    total: int
    done: int = 0
    result: Trajectory | None = None
    error: str | None = None


_JOBS_LOCK = threading.Lock()


def trajectory_of(browser: Browser, entry: BrowsedStore, steps: list[Step]) -> GrowthJob:
    """The growth table of the history: measured once per newest snapshot, off the request.

    Measuring Panel B over a long history takes seconds, so the first request starts
    the measurement and every page shows its progress until the table is ready.
    """
    key = ("trajectory", entry.id, steps[-1].commit)
    with _JOBS_LOCK:
        if browser.cache.has(key):
            found: GrowthJob = browser.cache.get(key, lambda: GrowthJob(0))
            return found
        job = GrowthJob(len(steps))
        browser.cache.put(key, job)

    def progress(done: int, total: int) -> None:
        job.done, job.total = done, total

    def run() -> None:
        try:
            job.result = measure_history(History(entry.store), progress=progress)
        except Exception as exc:  # shown on the history page, never dropped
            job.error = f"{type(exc).__name__}: {exc}"

    threading.Thread(target=run, name=f"growth-{entry.id}", daemon=True).start()
    return job


def _patch(diff: StateDiff) -> tuple[list[PatchLine], int]:
    lines = diff.patch.split("\n")
    shown: list[PatchLine] = []
    for line in lines[:MAX_PATCH_LINES]:
        if line.startswith("diff --git"):
            path = "/memories/" + line.split(" b/", 1)[-1]
            shown.append(PatchLine("file", line, path))
        elif line.startswith(("+++", "---", "index ", "new file", "deleted file")):
            shown.append(PatchLine("meta", line))
        elif line.startswith("@@"):
            shown.append(PatchLine("hunk", line))
        elif line.startswith("+"):
            shown.append(PatchLine("add", line))
        elif line.startswith("-"):
            shown.append(PatchLine("del", line))
        else:
            shown.append(PatchLine("ctx", line))
    return shown, max(0, len(lines) - MAX_PATCH_LINES)


def history_page(browser: Browser, request: Request) -> HTMLResponse:
    """Step through the snapshots: the tree as it was, the change from the step before."""
    entry = browser.store(request.path_params["sid"])
    steps = history_steps(browser, entry)
    if not steps:
        return browser.page("history.html", entry=entry, steps=[])
    history = History(entry.store)
    raw = request.query_params.get("step")
    try:
        step = history.step(raw) if raw else steps[-1]
    except HistoryError as exc:
        raise HTTPException(404, str(exc)) from None
    diff = history.diff(step.index - 1, step.index) if step.index > 0 else None
    patch, cut = _patch(diff) if diff is not None else ([], 0)
    state = StoreState(browser, entry, step)
    under = request.query_params.get("under", ROOT)
    root, shown = build_nodes(state, under=under)
    growth = trajectory_of(browser, entry, steps)
    charts: list[Chart] = []
    if growth.result is not None:
        charts = [growth_chart(title, growth.result.column(column), step.index,
                               lambda i: browser.history_url(entry.id, i))
                  for column, title in GROWTH]
    added = set(diff.added) if diff else {p for p in state.files()}
    modified = set(diff.modified) if diff else set()
    return browser.page(
        "history.html", entry=entry, steps=steps, step=step, diff=diff, patch=patch, cut=cut,
        root=root, shown=shown, charts=charts, growth=growth, added=added, modified=modified,
        headings_limit=HEADINGS_FILES, state=state, under=under,
        open_url=lambda folder: browser.history_url(entry.id, step.index, under=folder),
    )
