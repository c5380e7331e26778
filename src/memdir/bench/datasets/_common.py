"""Shared reading helpers: every failure becomes a DatasetError naming the file."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memdir.bench._schema import DatasetError

__all__ = ["iter_lines", "parse_date", "read_json", "read_text", "session_keys", "validate"]

M = TypeVar("M", bound=BaseModel)

_SESSION_KEY = re.compile(r"^session_(\d+)$")


def read_text(path: Path) -> str:
    """A file's text, or a DatasetError saying why it cannot be read."""
    read_text_check(path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(path, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise DatasetError(path, f"cannot be read: {exc.strerror}") from None


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Stream a text file's lines as (1-based number, line), for files too big to hold."""
    read_text_check(path)
    try:
        with path.open(encoding="utf-8") as handle:
            yield from enumerate(handle, start=1)
    except UnicodeDecodeError as exc:
        raise DatasetError(path, f"is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DatasetError(path, f"cannot be read: {exc.strerror}") from None


def read_text_check(path: Path) -> None:
    """Raise a DatasetError if ``path`` is not an existing file."""
    if not path.exists():
        raise DatasetError(path, "no such file; see docs/datasets.md for where to get it")
    if path.is_dir():
        raise DatasetError(path, "is a folder, expected a file")


def read_json(path: Path) -> Any:
    """Parse a JSON file, with the line and column of a syntax error."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            path, f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None


def validate(model: type[M], data: Any, path: Path, where: str) -> M:
    """Validate raw data against a format model; a failure names the place and field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise DatasetError(
            path, f"{where}: field {field}: {first['msg']} ({exc.error_count()} problem(s))"
        ) from None


def parse_date(text: str | None, fmt: str, path: Path, where: str) -> datetime | None:
    """Parse a benchmark date string (None stays None)."""
    if text is None:
        return None
    try:
        return datetime.strptime(text.strip(), fmt)
    except ValueError:
        raise DatasetError(path, f"{where}: date {text!r} does not match {fmt!r}") from None


def session_keys(record: dict[str, Any]) -> list[tuple[int, str]]:
    """The ``session_N`` keys of a record, as (N, key) in numeric order.

    Keys such as ``session_N_date_time`` or ``events_session_N`` are not sessions.
    """
    found = []
    for key in record:
        match = _SESSION_KEY.match(key)
        if match:
            found.append((int(match.group(1)), key))
    return sorted(found)
