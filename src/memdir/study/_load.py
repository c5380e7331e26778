"""Reading a run folder back: cell statuses, question records and store infos."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from memdir.study._records import CellStatus, QuestionRecord, StoreInfo

__all__ = ["RunRecords", "load_run"]


@dataclass
class RunRecords:
    """A run as its records: only complete cells carry question records."""

    folder: Path
    statuses: list[CellStatus]
    records: dict[str, list[QuestionRecord]] = field(default_factory=dict)
    stores: dict[str, StoreInfo] = field(default_factory=dict)

    @property
    def complete(self) -> list[CellStatus]:
        """Cells whose every question has a record."""
        return [s for s in self.statuses if s.status == "complete"]

    @property
    def failed(self) -> list[CellStatus]:
        """Cells left out of every table, with their reasons."""
        return [s for s in self.statuses if s.status != "complete"]


def load_run(folder: str | Path) -> RunRecords:
    """Read a run folder written by :func:`memdir.study.run_study`.

    Raises:
        FileNotFoundError: The folder holds no run (no ``cells/*/status.json``).
    """
    root = Path(folder)
    paths = sorted((root / "cells").glob("*/status.json"))
    if not paths:
        raise FileNotFoundError(f"{root}: no cell status files; is this a study run folder?")
    run = RunRecords(root, [CellStatus.model_validate_json(p.read_text("utf-8")) for p in paths])
    order = _cell_order(root)
    run.statuses.sort(key=lambda s: order.get(s.cell.key, len(order)))
    for status in run.complete:
        records = [QuestionRecord.model_validate_json(p.read_text("utf-8"))
                   for p in sorted((root / "cells" / status.cell.key / "records").glob("*.json"))]
        records.sort(key=lambda r: (r.order is None, r.order or 0, r.question_id))
        run.records[status.cell.key] = records
    for path in sorted((root / "stores").glob("*.json")):
        info = StoreInfo.model_validate_json(path.read_text("utf-8"))
        run.stores[info.key] = info
    return run


def _cell_order(root: Path) -> dict[str, int]:
    path = root / "manifest.json"
    if not path.exists():
        return {}
    cells = json.loads(path.read_text("utf-8")).get("cells", [])
    return {key: i for i, key in enumerate(cells)}
