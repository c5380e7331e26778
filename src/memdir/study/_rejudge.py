"""Re-judging a finished run: a second record set graded again, and how far the grades moved.

:func:`rejudge_run` has a judge (the run's own by default) grade once more every
question of the run's complete cells that the first judging graded, through the
same judge calls and retries, and writes the outcome as a second record set in
``RUN/rejudge/<name>/``: a run folder of its own (manifest, cell statuses, one
record per question, the first record with the second judge's grades), so
``memdir study report`` reads it like the run. The first records are never
touched. Each graded question is written at once, so a stopped re-judging
resumes where it stopped. :func:`movement_table` then compares the two
judgings cell by cell: judge correctness first and second, the difference in
points, and how many questions flipped each way; the paper saw about 1.3 points
between two judgings of one cell.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from inspect_ai.model import Model
from pydantic import BaseModel

from memdir.agents import AgentError, PriceTable, resolve_model
from memdir.runs import RunRecord, read_record, write_record
from memdir.store import Store
from memdir.study._answer import record_path
from memdir.study._config import StudyConfig
from memdir.study._grading import JudgePin, judge_grades, judge_pin, without_judge
from memdir.study._load import RunRecords, load_run
from memdir.study._manifest import StudyManifest, read_study_manifest
from memdir.study._records import CellStatus, QuestionRecord
from memdir.tables import Table

__all__ = [
    "REJUDGE_DIR",
    "CellMovement",
    "RejudgeFailed",
    "RejudgeManifest",
    "RejudgeResult",
    "default_rejudge_name",
    "movement_table",
    "rejudge_run",
    "rejudge_run_async",
    "write_movement",
]

REJUDGE_DIR = "rejudge"
"""The folder of a run that holds its re-judged record sets, one per name."""
REJUDGE_MANIFEST = "rejudge.json"

ProgressFn = Callable[[int, int], None]
"""Called with (questions graded so far, questions to grade)."""


class RejudgeFailed(RuntimeError):
    """The judge model failed after its retries; what was graded before is kept."""


class RejudgeManifest(RunRecord):
    """What a re-judged record set is: which run, which judge, and the first judge."""

    version: int = 1
    source: str
    """The run folder the records come from."""
    name: str
    judge: JudgePin
    first_judge: JudgePin | None
    """The run's own judge (None: the run was not judged)."""


class CellMovement(BaseModel):
    """How one cell's judge grades moved between the first and the second judging."""

    status: CellStatus
    """The cell (the first run's status)."""
    items: int = 0
    """Questions judged correct or wrong both times."""
    first: int = 0
    """Of those, judged correct the first time."""
    second: int = 0
    """Of those, judged correct the second time."""
    up: int = 0
    """Wrong the first time, correct the second."""
    down: int = 0
    """Correct the first time, wrong the second."""
    unjudged: int = 0
    """Questions for the correctness judge that lack a grade on one side (a reply not
    in the asked-for form)."""
    attribution: tuple[float, float] | None = None
    """Mean attribution score (0-1, the three scores averaged), first and second,
    over the questions that have one both times; None where none has."""

    @property
    def first_pct(self) -> float | None:
        """Judge correctness the first time, in percent of ``items``."""
        return 100 * self.first / self.items if self.items else None

    @property
    def second_pct(self) -> float | None:
        """Judge correctness the second time, in percent of ``items``."""
        return 100 * self.second / self.items if self.items else None

    @property
    def delta(self) -> float | None:
        """Second minus first, in points."""
        return 100 * (self.second - self.first) / self.items if self.items else None


@dataclass
class RejudgeResult:
    """A re-judged record set and its movement against the run's first judging."""

    folder: Path
    """The second record set (``RUN/rejudge/<name>``)."""
    judge: JudgePin
    cells: list[CellMovement] = field(default_factory=list)
    graded: int = 0
    """Questions graded by this call (the rest were graded by an earlier one)."""
    total: int = 0
    """Questions the second record set re-judges."""
    left_out: list[str] = field(default_factory=list)
    """Keys of the run's cells that did not complete (never re-judged)."""

    @property
    def mean_abs_movement(self) -> float | None:
        """Mean over cells with judged items of the absolute difference, in points."""
        deltas = [abs(c.delta) for c in self.cells if c.delta is not None]
        return sum(deltas) / len(deltas) if deltas else None


def default_rejudge_name(model: str) -> str:
    """The record set's name when none is given: ``rejudge-`` and the judge model."""
    return "rejudge-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in model)


def _was_judged(record: QuestionRecord) -> bool:
    grades = record.grades
    return grades.judge_usage is not None or grades.judge_error is not None


def _to_rejudge(records: list[QuestionRecord], judged_run: bool,
                limit: int | None) -> list[QuestionRecord]:
    """The cell's questions the second judging grades: those the first one graded.

    A run that was never judged has every question graded (the config's judge
    limit applies, as it would have).
    """
    if judged_run:
        return [r for r in records if _was_judged(r)]
    return records[:limit] if limit is not None else list(records)


def _store(run: RunRecords, status: CellStatus) -> Store | None:
    """The store the cell's answers cite (None for a variant that reads none).

    Raises:
        FileNotFoundError: The store's folder is gone.
    """
    info = run.stores.get(status.store or "")
    if info is None or info.path is None:
        return None
    path = Path(info.path)
    if not path.is_dir():
        raise FileNotFoundError(
            f"the store of cell {status.cell.key} is gone from {path}; the attribution judge "
            "reads the cited files: rerun `memdir study run` on the config to rebuild it")
    return Store(path)


class _Rejudging:
    """One re-judging of a run into one record set."""

    def __init__(self, run: RunRecords, out: Path, config: StudyConfig, model: Model,
                 progress: ProgressFn | None) -> None:
        self.run = run
        self.out = out
        self.config = config
        self.model = model
        self.prices: PriceTable = run.prices
        self.progress = progress
        self.done = 0
        self.total = 0
        self.graded = 0

    def cell_folder(self, status: CellStatus) -> Path:
        return self.out / "cells" / status.cell.key

    async def grade(self, status: CellStatus, record: QuestionRecord, store: Store | None
                    ) -> None:
        try:
            grades = await judge_grades(
                without_judge(record.grades), question=record.question, gold=record.gold,
                multiple_choice=record.grades.option_correct is not None,
                answer=record.answer, store=store, judge=self.config.judge, model=self.model,
                prices=self.prices)
        except AgentError as exc:
            raise RejudgeFailed(
                f"the judge failed on {record.question_id} of cell {status.cell.key} after "
                f"its retries ({exc}); {self.done} of {self.total} questions of "
                f"{self.out} are graded and kept") from None
        write_record(record_path(self.cell_folder(status), record.question_id),
                     record.model_copy(update={"grades": grades}))
        self.done += 1
        self.graded += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def plan(self, judged_run: bool) -> list[Callable[[], Awaitable[None]]]:
        """Copy the records no judge grades; return the gradings still to do."""
        jobs: list[Callable[[], Awaitable[None]]] = []
        for status in self.run.complete:
            records = self.run.records[status.cell.key]
            wanted = {r.question_id for r in
                      _to_rejudge(records, judged_run, self.config.judge.limit)}
            folder = self.cell_folder(status)
            store = _store(self.run, status) if wanted else None
            for record in records:
                if record_path(folder, record.question_id).exists():
                    if record.question_id in wanted:
                        self.done += 1
                        self.total += 1
                elif record.question_id in wanted:
                    self.total += 1
                    jobs.append(partial(self.grade, status, record, store))
                else:
                    write_record(record_path(folder, record.question_id), record)
        return jobs

    def write_statuses(self) -> None:
        """A cell of the record set is complete once each of its questions has a record."""
        for status in self.run.complete:
            folder = self.cell_folder(status)
            folder.mkdir(parents=True, exist_ok=True)
            have = sum(1 for _ in (folder / "records").glob("*.json"))
            done = have >= status.questions
            write_record(folder / "status.json", status.model_copy(update={
                "answered": have, "status": "complete" if done else "failed",
                "reason": None if done else "re-judging stopped; rerun it to resume"}))


async def _bounded(jobs: Iterable[Callable[[], Awaitable[None]]], limit: int) -> None:
    """Run the jobs, at most ``limit`` at once; the first failure cancels the rest."""
    queue = list(jobs)
    running: set[asyncio.Task[None]] = set()
    try:
        while queue or running:
            while queue and len(running) < limit:
                running.add(asyncio.ensure_future(queue.pop(0)()))
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)


def _prepare(folder: Path, judge_model: str | None, name: str | None
             ) -> tuple[RunRecords, StudyManifest, StudyConfig, Path, RejudgeManifest]:
    """Read the run and settle the judge and the record set's folder.

    Raises:
        FileNotFoundError: The folder holds no run.
        ValueError: The run has no judge and none was given, the run's config
            cannot be read, or the record set was graded by another judge.
    """
    run = load_run(folder)
    manifest = read_study_manifest(folder)
    if manifest is None:
        raise FileNotFoundError(f"{folder}: no manifest.json; is this a study run folder?")
    config = StudyConfig.model_validate(manifest.config)
    model = judge_model or config.judge.model
    if model is None:
        raise ValueError(f"{folder} was not judged (its config has judge.model: null); "
                         "name a judge with --judge provider/model")
    config = config.model_copy(update={"judge": config.judge.model_copy(
        update={"model": model})})
    pin = judge_pin(config.judge)
    assert pin is not None
    out = folder / REJUDGE_DIR / (name or default_rejudge_name(model))
    first = manifest.judge if manifest.config.get("judge", {}).get("model") else None
    wanted = RejudgeManifest(source=str(folder), name=out.name, judge=pin, first_judge=first)
    previous = out / REJUDGE_MANIFEST
    if previous.exists() and read_record(previous, RejudgeManifest).judge.hash != pin.hash:
        raise ValueError(f"{out} was graded by another judge (or other judge prompts); "
                         "choose another --out name")
    return run, manifest, config, out, wanted


def _write_set_manifests(folder: Path, out: Path, manifest: StudyManifest,
                         config: StudyConfig, wanted: RejudgeManifest) -> None:
    """The record set's own manifests, and the run's store infos (for its report)."""
    write_record(out / REJUDGE_MANIFEST, wanted)
    resolved = {**manifest.config, "judge": config.judge.model_dump(mode="json")}
    write_record(out / "manifest.json",
                 manifest.model_copy(update={"config": resolved, "judge": wanted.judge}))
    (out / "stores").mkdir(parents=True, exist_ok=True)
    for info in sorted((folder / "stores").glob("*.json")):
        shutil.copyfile(info, out / "stores" / info.name)


async def rejudge_run_async(
    folder: str | Path, *, judge_model: str | None = None, name: str | None = None,
    models: Mapping[str, Model] | None = None, progress: ProgressFn | None = None,
) -> RejudgeResult:
    """Grade a finished run's judged questions again into a second record set.

    Args:
        folder: The run folder.
        judge_model: The judge (default: the run config's judge model), with the
            run's judge settings.
        name: The record set's folder name under ``RUN/rejudge/`` (default:
            :func:`default_rejudge_name`); an existing set of that name is resumed.
        models: Configured inspect_ai models for some model names (tests pass
            scripted ones); others are resolved with memdir's retries.
        progress: Called after each graded question.

    Raises:
        FileNotFoundError: The folder holds no run, or a cell's store is gone.
        ValueError: No judge is named, the model name is unusable, or the set of
            that name was graded by another judge.
        RejudgeFailed: The judge model failed after retries (graded questions kept).
    """
    root = Path(folder)
    run, manifest, config, out, wanted = _prepare(root, judge_model, name)
    assert config.judge.model is not None
    model = (models or {}).get(config.judge.model) or resolve_model(config.judge.model)
    _write_set_manifests(root, out, manifest, config, wanted)
    work = _Rejudging(run, out, config, model, progress)
    try:
        jobs = work.plan(judged_run=bool(manifest.config.get("judge", {}).get("model")))
        if progress is not None:
            progress(work.done, work.total)
        await _bounded(jobs, config.concurrency)
    finally:
        work.write_statuses()
    result = RejudgeResult(out, wanted.judge, graded=work.graded, total=work.total,
                           left_out=[s.cell.key for s in run.failed])
    for status in run.complete:
        second = {r.question_id: r for r in _read_set(work.cell_folder(status))}
        result.cells.append(_movement(status, run.records[status.cell.key], second))
    return result


def rejudge_run(folder: str | Path, *, judge_model: str | None = None, name: str | None = None,
                models: Mapping[str, Model] | None = None,
                progress: ProgressFn | None = None) -> RejudgeResult:
    """Synchronous wrapper of :func:`rejudge_run_async`."""
    return asyncio.run(rejudge_run_async(folder, judge_model=judge_model, name=name,
                                         models=models, progress=progress))


def _read_set(cell_folder: Path) -> list[QuestionRecord]:
    paths = sorted((cell_folder / "records").glob("*.json"))
    return [read_record(p, QuestionRecord) for p in paths]


def _attribution_mean(record: QuestionRecord) -> float | None:
    scores = record.grades.attribution
    return None if not scores else sum(scores.values()) / len(scores)


def _movement(status: CellStatus, first: list[QuestionRecord],
              second: Mapping[str, QuestionRecord]) -> CellMovement:
    """Compare each question's first and second judge grades."""
    move = CellMovement(status=status)
    attributed: list[tuple[float, float]] = []
    for record in first:
        again = second.get(record.question_id)
        if again is None or not _was_judged(again):
            continue
        a, b = record.grades.judge_correct, again.grades.judge_correct
        for_correctness = record.grades.option_correct is None and record.gold is not None
        if a is not None and b is not None:
            move.items += 1
            move.first += a
            move.second += b
            move.up += int(a < b)
            move.down += int(a > b)
        elif for_correctness and _was_judged(record):
            move.unjudged += 1
        pair = (_attribution_mean(record), _attribution_mean(again))
        if pair[0] is not None and pair[1] is not None:
            attributed.append((pair[0], pair[1]))
    if attributed:
        move.attribution = (sum(p[0] for p in attributed) / len(attributed),
                            sum(p[1] for p in attributed) / len(attributed))
    return move


def movement_table(result: RejudgeResult) -> Table:
    """Per cell: judge % first and second, the difference, and the flips each way."""
    table = Table("rejudge-movement", "Re-judging: how far the judge's grades moved",
                  ["benchmark", "conversation", "variant", "builder", "search", "harness",
                   "items", "judge % first", "judge % second", "difference (points)",
                   "0 -> 1", "1 -> 0", "unjudged", "attribution first", "attribution second"],
                  empty="(no complete cells)")
    for m in result.cells:
        c = m.status.cell
        attribution = m.attribution or (None, None)
        table.rows.append([c.dataset_key, c.conversation, c.variant, c.builder_model,
                           c.search_model, c.harness, m.items, m.first_pct, m.second_pct,
                           m.delta, m.up, m.down, m.unjudged,
                           None if attribution[0] is None else 100 * attribution[0],
                           None if attribution[1] is None else 100 * attribution[1]])
    mean = result.mean_abs_movement
    judged = [m for m in result.cells if m.items]
    table.notes.append(
        "mean absolute movement: " + ("no cell has questions judged both times" if mean is None
                                      else f"{mean:.1f} points over {len(judged)} cell(s)")
        + " (the paper reports about 1.3 points between two judgings of one cell)")
    table.notes.append(
        f"flipped: {sum(m.up for m in result.cells)} from wrong to correct, "
        f"{sum(m.down for m in result.cells)} from correct to wrong, of "
        f"{sum(m.items for m in result.cells)} questions judged both times")
    if result.left_out:
        table.notes.append(f"left out: {len(result.left_out)} cell(s) the run did not "
                           f"complete ({', '.join(result.left_out)})")
    table.notes.append("attribution: the mean of the three attribution scores, in percent; "
                       f"second judge {result.judge.model} (judge hash {result.judge.hash[:12]})")
    return table


def write_movement(result: RejudgeResult) -> list[Path]:
    """Write the movement table into the record set as ``movement.md`` and ``movement.csv``."""
    table = movement_table(result)
    md, csv = result.folder / "movement.md", result.folder / "movement.csv"
    md.write_text(table.markdown(), "utf-8")
    csv.write_text(table.csv(), "utf-8")
    return [md, csv]
