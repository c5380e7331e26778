"""Reading a run folder back: cell statuses, question records and store infos."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memdir.agents import PriceTable
from memdir.runs import read_record
from memdir.study._manifest import StudyManifest, read_study_manifest
from memdir.study._records import CellStatus, QuestionRecord, StoreInfo

__all__ = ["RunRecords", "load_run"]


@dataclass
class RunRecords:
    """A run as its records: only complete cells carry question records."""

    folder: Path
    statuses: list[CellStatus]
    records: dict[str, list[QuestionRecord]] = field(default_factory=dict)
    stores: dict[str, StoreInfo] = field(default_factory=dict)
    prices: PriceTable = field(default_factory=PriceTable.load)
    """What the reports price the records' usage with (the run's own price file, if any)."""
    manifest: StudyManifest | None = None
    """The run's pinned configuration and inputs (None for a folder written without one)."""

    @property
    def complete(self) -> list[CellStatus]:
        """Cells whose every question has a record."""
        return [s for s in self.statuses if s.status == "complete"]

    @property
    def failed(self) -> list[CellStatus]:
        """Cells left out of every table, with their reasons."""
        return [s for s in self.statuses if s.status != "complete"]


def load_run(folder: str | Path, prices: PriceTable | None = None) -> RunRecords:
    """Read a run folder written by :func:`memdir.study.run_study`.

    Args:
        folder: The run folder.
        prices: The price table for costs; default: the shipped table with the run
            config's price file (``prices``) merged over it, as the run had.

    Raises:
        FileNotFoundError: The folder holds no run (no ``cells/*/status.json``).
        ValueError: A record file is damaged (the message names it), or the run's
            price file cannot be read.
    """
    root = Path(folder)
    paths = sorted((root / "cells").glob("*/status.json"))
    if not paths:
        raise FileNotFoundError(f"{root}: no cell status files; is this a study run folder?")
    manifest = read_study_manifest(root)
    if prices is None:
        prices = PriceTable.load(manifest.config.get("prices") if manifest else None)
    run = RunRecords(root, [read_record(p, CellStatus) for p in paths], prices=prices,
                     manifest=manifest)
    order = {} if manifest is None else {key: i for i, key in enumerate(manifest.cells)}
    run.statuses.sort(key=lambda s: order.get(s.cell.key, len(order)))
    for status in run.complete:
        folder = root / "cells" / status.cell.key / "records"
        records = [read_record(p, QuestionRecord) for p in sorted(folder.glob("*.json"))]
        records.sort(key=lambda r: (r.order is None, r.order or 0, r.question_id))
        run.records[status.cell.key] = records
    for path in sorted((root / "stores").glob("*.json")):
        info = read_record(path, StoreInfo)
        run.stores[info.key] = info.model_copy(update={"path": located_store(info.path, root)})
    return run


def recorded_store(path: str | Path, run_dir: Path) -> str:
    """A store's folder as a run records it: relative to the run folder when inside it.

    Any other folder (a build cache elsewhere) is recorded absolute. Either way
    the record reads the same from whatever folder the run is later opened in.
    """
    where = Path(path).absolute()
    try:
        return where.relative_to(run_dir.absolute()).as_posix()
    except ValueError:
        return str(where)


def located_store(path: str | None, run_dir: Path) -> str | None:
    """The store folder a run's record names, found from whatever folder the run is read in.

    A relative path is the run folder's (see :func:`recorded_store`). Runs written
    before that recorded it relative to the folder the run was started in
    (``runs/x/stores/k/memories``): such a path is found by its tail inside the run
    folder, else as it was written.
    """
    if path is None or Path(path).is_absolute():
        return path
    parts = Path(path).parts
    for start in range(len(parts)):
        inside = run_dir.joinpath(*parts[start:])
        if inside.is_dir():
            return str(inside.absolute())
    return path
