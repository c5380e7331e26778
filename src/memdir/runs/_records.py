"""The base of every run record: one version field, one way to write it to disk.

Study records (questions, cell statuses), skill-setting records (steps, what
retrieval served, chain manifests) derive from :class:`RunRecord`. The version
field is spelled ``version``; records written with the older ``schema_version``
spelling load unchanged. Records are written whole or not at all, through the
store's :func:`memdir.store.atomic_write`, so a reader (or a resumed run) never
sees half a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError, model_validator

from memdir.store import atomic_write

__all__ = ["OLD_VERSION_FIELD", "RunRecord", "read_record", "write_json", "write_record"]

R = TypeVar("R", bound=BaseModel)

OLD_VERSION_FIELD = "schema_version"
"""How skill-setting records spelled the version field before the run layer."""


class RunRecord(BaseModel):
    """A versioned record of a run; subclasses set their own ``version`` default."""

    version: int = 1

    @model_validator(mode="before")
    @classmethod
    def _older_spelling(cls, data: Any) -> Any:
        """Read ``schema_version`` (the older spelling) as ``version``."""
        if isinstance(data, dict) and OLD_VERSION_FIELD in data:
            data = dict(data)
            old = data.pop(OLD_VERSION_FIELD)
            data.setdefault("version", old)
        return data


def write_record(path: Path, record: BaseModel) -> None:
    """Write a record as indented JSON, atomically (parent folders are created)."""
    atomic_write(path, record.model_dump_json(indent=1).encode("utf-8"))


def write_json(path: Path, data: object) -> None:
    """Write plain JSON data atomically (parent folders are created)."""
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"))


def read_record(path: Path, kind: type[R]) -> R:
    """Read one record file as ``kind``.

    Raises:
        ValueError: The file is not a valid record of that kind; the message names the file.
    """
    try:
        return kind.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the top level"
        raise ValueError(f"{path} is not a valid {kind.__name__} ({where}: {first['msg']}); "
                         "it was damaged or written by another program: move it away "
                         "and rerun to write it again") from None
