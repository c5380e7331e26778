"""A build folder: the store, its git history, and ``build.json`` (what is done so far).

Every unit of a build (chunk, pass, episode) ends in one git snapshot of the
store. ``build.json`` lists the finished units with their records and, once the
build is done, the final :class:`BuildRecord`. The record of a unit is written
before its snapshot, so a process killed between the two is repaired on resume
by taking the missing snapshot (nothing else ran in between). On resume the
store's files are reset to the last snapshot, so a unit that was cut short
(even by SIGKILL) leaves no partial writes behind.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from filelock import FileLock, Timeout
from pydantic import BaseModel, Field

from memdir.builders._key import BuildSpec
from memdir.builders._record import BuildError, BuildRecord, UnitRecord
from memdir.store import Store, atomic_write
from memdir.store.history import History

__all__ = ["BuildFolder", "BuildState"]


class BuildState(BaseModel):
    """``build.json``: the spec, the units finished, and the record once complete."""

    key: str
    spec: BuildSpec
    status: Literal["in_progress", "complete"] = "in_progress"
    units: list[UnitRecord] = Field(default_factory=list)
    record: BuildRecord | None = None


def unit_message(unit: UnitRecord) -> str:
    """The snapshot message of a unit, e.g. ``chunk 3: Session 2 (...)``."""
    return f"{unit.kind} {unit.index}: {unit.label}"


class BuildFolder:
    """One build's folder in the cache, named by its spec's key.

    Args:
        cache: The folder holding build folders.
        spec: The build's whole configuration.
    """

    def __init__(self, cache: Path, spec: BuildSpec) -> None:
        self.spec = spec
        self.path = Path(cache) / spec.folder_name
        self.state_path = self.path / "build.json"
        self.store_root = self.path / "memories"
        self._state: BuildState | None = None
        self._store: Store | None = None

    @property
    def state(self) -> BuildState:
        """The build's state (after :meth:`open`)."""
        if self._state is None:
            raise RuntimeError("open the build folder first")
        return self._state

    @property
    def store(self) -> Store:
        """The store being built (after :meth:`open`)."""
        if self._store is None:
            raise RuntimeError("open the build folder first")
        return self._store

    @property
    def history(self) -> History:
        """The store's git history."""
        return History(self.store)

    @contextmanager
    def open(self, seed: Callable[[Store], object], seed_label: str) -> Iterator[BuildFolder]:
        """Hold the build's lock, and start the build or resume it at its last unit.

        Args:
            seed: Writes the store's starting state into an empty store.
            seed_label: The message of the first snapshot (e.g. ``verbatim dump``).

        Raises:
            BuildError: Another process holds the build, or the folder is inconsistent.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.path / "build.lock", timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise BuildError(f"another process is building {self.path}; wait for it to "
                             "finish, or stop it and rerun to resume") from None
        try:
            self._state = self._load()
            if self._state is None:
                self._start(seed, seed_label)
            else:
                self._store = Store(self.store_root)
                if self._state.status == "in_progress":
                    self._resume()
            yield self
        finally:
            lock.release()

    def _load(self) -> BuildState | None:
        if not self.state_path.exists():
            return None
        try:
            state = BuildState.model_validate_json(self.state_path.read_text("utf-8"))
        except ValueError as exc:
            raise BuildError(f"{self.state_path} is not a build state ({exc}); delete the "
                             "folder to build afresh") from None
        if state.key != self.spec.key:
            raise BuildError(f"{self.state_path} belongs to another configuration "
                             f"(key {state.key[:16]}, expected {self.spec.key[:16]}); delete "
                             "the folder to build afresh")
        return state

    def _start(self, seed: Callable[[Store], object], seed_label: str) -> None:
        if self.store_root.exists():
            shutil.rmtree(self.store_root)  # a start cut short before build.json existed
        self._store = Store(self.store_root, create=True)
        seed(self._store)
        self.history.snapshot(seed_label)
        self._state = BuildState(key=self.spec.key, spec=self.spec)
        self._save()

    def _resume(self) -> None:
        steps = self.history.steps()
        units = self.state.units
        if len(steps) == len(units):  # the last unit's record was saved, its snapshot not
            self.history.snapshot(unit_message(units[-1]))
        elif len(steps) != len(units) + 1:
            raise BuildError(f"{self.path}: build.json lists {len(units)} finished units but "
                             f"the history has {len(steps)} snapshots; delete the folder to "
                             "build afresh")
        self.history.restore(-1)

    def _save(self) -> None:
        atomic_write(self.state_path,
                     json.dumps(self.state.model_dump(mode="json"), indent=1).encode("utf-8"))

    def reset(self) -> None:
        """Put the store back to its last snapshot (after a failed unit).

        Files written since (whatever their name) go, changed files are rewritten and
        folders left empty are pruned; ``.git`` and ``.memdir`` stay.
        """
        self.history.restore(-1)

    def commit(self, unit: UnitRecord) -> None:
        """Record a finished unit, then snapshot the store."""
        self.state.units.append(unit)
        self._save()
        self.history.snapshot(unit_message(unit))

    def finish(self, record: BuildRecord) -> None:
        """Mark the build complete with its record."""
        self._state = self.state.model_copy(update={"status": "complete", "record": record})
        self._save()
