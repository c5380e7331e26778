"""Where a study's benchmark files are, and whether they hold what the config names.

The data folder is, in order: the one passed in (``memdir study run --data``),
``MEMDIR_DATA_DIR``, the config's ``data:`` (a relative one taken from the config
file's folder by :func:`memdir.study.load_config`). Never the folder the command
runs in. :func:`check_data` loads every benchmark file a run would read and
resolves every conversation it names, the same calls the run makes, so a dry run
and a real run fail on the same problem with the same message.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from memdir.bench import DatasetError, load_benchmark
from memdir.config import get_settings
from memdir.study._config import Cell, ConfigError, StudyConfig
from memdir.study._stores import cell_input

__all__ = ["DataCheck", "DataError", "check_data", "resolve_data_dir"]

_LAYOUT_HINT = "the folder holding locomo/, realtalk/ and personamem/ (docs/datasets.md)"


class DataError(ConfigError):
    """The benchmark data a study needs is missing or unusable.

    Attributes:
        hint: The next step that fixes it (one line).
    """

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class DataCheck:
    """What :func:`check_data` found: the folder and the questions of each cell."""

    folder: Path
    questions: dict[str, int]
    """Questions per cell key."""


def resolve_data_dir(config: StudyConfig, given: str | Path | None = None) -> Path:
    """The benchmark folder: ``given``, else ``MEMDIR_DATA_DIR``, else the config's ``data:``.

    Raises:
        DataError: None of them names a folder, or the folder named does not exist
            (the message says which of the three named it).
    """
    env = get_settings().data_dir
    if given is not None:
        found, source = Path(given), "--data"
    elif env is not None:
        found, source = env, "MEMDIR_DATA_DIR"
    elif config.data_dir is not None:
        found, source = config.data_dir, "the config's data:"
    else:
        raise DataError(
            "no benchmark folder: pass --data, set MEMDIR_DATA_DIR or give the config a data:",
            f"pass --data DIR, DIR being {_LAYOUT_HINT}")
    folder = found.expanduser().resolve()
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise DataError(f"benchmark folder {folder} (from {source}) {what}",
                        f"point {source} at {_LAYOUT_HINT}")
    return folder


def check_data(config: StudyConfig, folder: Path) -> DataCheck:
    """Load every file the config's cells read and resolve every conversation they name.

    Raises:
        DataError: A file is missing or does not parse, or a conversation (an id or
            a ``#n`` position) is not in its benchmark; the first problem found.
    """
    questions: dict[str, int] = {}
    for cell in config.cells():
        try:
            questions[cell.key] = len(cell_input(cell, folder).questions)
        except DatasetError as exc:
            raise DataError(f"{cell.dataset_key}: {exc}", _file_hint(exc)) from None
        except KeyError:
            raise _unknown_conversation(cell, folder) from None
    return DataCheck(folder, questions)


def _file_hint(exc: DatasetError) -> str:
    """Missing: where to put it; broken: replace it (a cut-off download is the usual cause)."""
    if not exc.path.exists():
        return (f"download {exc.path.name} into {exc.path.parent} (docs/datasets.md names its "
                "source), or point --data at a folder that has it")
    return (f"replace {exc.path} with a fresh copy of the published file (a cut-off download "
            "is the usual cause; docs/datasets.md names the source)")


def _unknown_conversation(cell: Cell, folder: Path) -> DataError:
    """Name the conversation that is not there, the closest id and the positions that are."""
    dataset = load_benchmark(cell.benchmark, folder, cell.tier)
    ids = [c.id for c in dataset.conversations]
    where = f"{cell.dataset_key}: {dataset.source} holds {len(ids)} conversation(s)"
    close = difflib.get_close_matches(cell.conversation, ids, n=1)
    guess = f"did you mean {close[0]!r}? " if close else ""
    shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
    return DataError(f"{where}, none of them {cell.conversation!r}",
                     f"{guess}name one in the config by id ({shown}) or by position, "
                     f"#1 to #{len(ids)}")
