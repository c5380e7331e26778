"""A store's history: git snapshots taken at the store root, replayed and compared.

Every snapshot is one git commit of the whole store, so any past state can be
rebuilt exactly in another folder, two states can be compared, and people can
inspect the history with ordinary git commands (``git log`` inside the store).
The repository lives in ``.git`` at the root, hidden from the store's listings
because its name starts with a dot; ``.memdir/`` (the lock file) and the
temporary files of atomic writes are excluded through ``.git/info/exclude``.

git is driven through its command line with an explicit author and committer,
so snapshots work on machines where git was never configured.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from memdir.store._errors import StoreError
from memdir.store._paths import ROOT
from memdir.store._store import STATE_DIR, Store

__all__ = ["History", "HistoryError", "StateDiff", "Step", "VerifyReport"]

_IDENTITY: Final = {
    "GIT_AUTHOR_NAME": "memdir",
    "GIT_AUTHOR_EMAIL": "memdir@localhost",
    "GIT_COMMITTER_NAME": "memdir",
    "GIT_COMMITTER_EMAIL": "memdir@localhost",
}
_CONFIG: Final = (
    "-c", "commit.gpgsign=false",
    "-c", "core.autocrlf=false",
    "-c", "core.quotepath=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "init.defaultBranch=main",
)
_EXCLUDES: Final = (f"/{STATE_DIR}/", ".tmp-*.part")
_SEP: Final = "\x1f"


class HistoryError(StoreError):
    """A history request that cannot be honoured (no history yet, unknown step, git failure)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded snapshot: its position (0 = oldest), commit, tree hash and message."""

    index: int
    commit: str
    tree: str
    message: str
    time: str
    """Commit time, ISO 8601."""


@dataclass(frozen=True, slots=True)
class StateDiff:
    """What changed between two steps; paths are agent-facing (``/memories/...``)."""

    added: list[str]
    removed: list[str]
    modified: list[str]
    patch: str
    """A unified diff of the text changes."""

    @property
    def empty(self) -> bool:
        """Whether the two states are identical."""
        return not (self.added or self.removed or self.modified)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of replaying every step: how many were checked and which did not match."""

    checked: int
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every reconstruction matched its snapshot."""
        return not self.mismatches


class History:
    """The git history of one store.

    Args:
        store: The store whose root holds (or will hold) the repository.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = store.root

    def __repr__(self) -> str:
        return f"History({str(self.root)!r})"

    # -- git plumbing ----------------------------------------------------------

    def _git(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        check: bool = True,
    ) -> bytes:
        base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        full_env = {**base, **_IDENTITY, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        try:
            done = subprocess.run(
                ["git", *_CONFIG, *args],
                cwd=cwd or self.root,
                input=input,
                env=full_env,
                capture_output=True,
                check=False,
            )
        except FileNotFoundError:
            raise HistoryError(
                "git is not installed; install git to keep a store's history."
            ) from None
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip()
            raise HistoryError(f"git {args[0]} failed in {self.root}: {message}")
        return done.stdout

    @property
    def initialized(self) -> bool:
        """Whether the store root holds its own git repository."""
        return (self.root / ".git").is_dir()

    def _require(self) -> None:
        if not self.initialized:
            raise HistoryError(
                f"The store at {self.root} has no history yet. "
                "Start one with `memdir history STORE init`."
            )

    # -- recording -------------------------------------------------------------

    def init(self) -> None:
        """Create the repository if missing and exclude memdir's own state; idempotent."""
        if not self.initialized:
            self._git("init", "-q")
        exclude = self.root / ".git" / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        lines = exclude.read_text(encoding="utf-8").splitlines() if exclude.exists() else []
        missing = [pattern for pattern in _EXCLUDES if pattern not in lines]
        if missing:
            exclude.write_text("\n".join([*lines, *missing]) + "\n", encoding="utf-8")

    def snapshot(self, message: str) -> str:
        """Record the store's current state as a new step and return its commit id.

        A snapshot with no change still records a step, so a trajectory keeps one
        step per chunk or task. The store's write lock is held while the state is
        read, so a concurrent writer cannot leave a half-made state in a snapshot.

        Args:
            message: Names the unit the step belongs to, e.g. ``"chunk 12"``.
        """
        if not message.strip():
            raise HistoryError("A snapshot needs a message naming its unit, e.g. 'chunk 3'.")
        self.init()
        with self.store.locked():
            self._git("add", "-A", ".")
            self._git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)
        return self._git("rev-parse", "HEAD").decode().strip()

    # -- reading ---------------------------------------------------------------

    def steps(self) -> list[Step]:
        """Every recorded step, oldest first."""
        self._require()
        if not self._git("rev-parse", "--verify", "-q", "HEAD", check=False).strip():
            return []
        fmt = _SEP.join(["%H", "%T", "%cI", "%B"]) + "\x1e"
        raw = self._git("log", "--reverse", "--first-parent", f"--format={fmt}").decode()
        found: list[Step] = []
        for record in raw.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            commit, tree, time, message = record.split(_SEP, 3)
            found.append(Step(len(found), commit, tree, message.strip(), time))
        return found

    def step(self, ref: int | str | Step) -> Step:
        """Look up a step by index (negative counts from the newest) or by commit prefix.

        A string of up to six digits is read as an index; a :class:`Step` is returned as is.
        """
        if isinstance(ref, Step):
            return ref
        steps = self.steps()
        if not steps:
            raise HistoryError("The history has no steps yet; take a snapshot first.")
        if isinstance(ref, int) or (isinstance(ref, str) and ref.lstrip("-").isdigit()
                                    and len(ref.lstrip("-")) < 7):
            index = int(ref)
            if -len(steps) <= index < len(steps):
                return steps[index]
            raise HistoryError(
                f"There is no step {index}: the history has steps 0 to {len(steps) - 1}."
            )
        matches = [s for s in steps if s.commit.startswith(ref.lower())]
        if len(matches) == 1:
            return matches[0]
        raise HistoryError(
            f"{ref!r} names {'no' if not matches else 'more than one'} step; "
            "give a step number or a longer commit id (see `memdir history STORE log`)."
        )

    def blobs(self, ref: int | str | Step) -> dict[str, str]:
        """The files of a step: agent-facing path -> git blob id."""
        step = self.step(ref)
        raw = self._git("ls-tree", "-r", "-z", "--full-tree", step.commit)
        found: dict[str, str] = {}
        for entry in raw.split(b"\0"):
            if not entry:
                continue
            meta, path = entry.split(b"\t", 1)
            _mode, kind, blob = meta.decode().split()
            if kind == "blob":
                found[f"{ROOT}/{path.decode('utf-8')}"] = blob
        return found

    def read_blobs(self, blob_ids: Iterable[str]) -> dict[str, bytes]:
        """The contents of several blobs, fetched in one git process."""
        wanted = sorted(set(blob_ids))
        if not wanted:
            return {}
        out = self._git("cat-file", "--batch", input=("\n".join(wanted) + "\n").encode())
        found: dict[str, bytes] = {}
        pos = 0
        for blob in wanted:
            header_end = out.index(b"\n", pos)
            header = out[pos:header_end].decode().split()
            if len(header) < 3:
                raise HistoryError(f"git could not read blob {blob}: {' '.join(header)}")
            size = int(header[2])
            start = header_end + 1
            found[blob] = out[start : start + size]
            pos = start + size + 1
        return found

    def read_state(self, ref: int | str | Step) -> dict[str, str]:
        """A past state as ``{path: text}``; the live store is not touched."""
        blobs = self.blobs(ref)
        contents = self.read_blobs(blobs.values())
        return {path: contents[blob].decode("utf-8") for path, blob in sorted(blobs.items())}

    def checkout_to(self, ref: int | str | Step, dest: str | os.PathLike[str]) -> Store:
        """Rebuild a past state, byte for byte, in an empty or new folder ``dest``."""
        target = Path(dest)
        if target.exists() and any(target.iterdir()):
            raise HistoryError(f"{target} is not empty; give a new or empty folder.")
        self._write_state(ref, target)
        return Store(target)

    def restore(self, ref: int | str | Step) -> Step:
        """Put the live store back to a step: exactly its files, nothing else.

        Files and folders made since (whatever their names) are removed, changed
        files rewritten; ``.git`` and ``.memdir`` stay. The history itself is not
        changed (take a snapshot afterwards to record the restore as a step).

        Returns:
            The step restored.
        """
        step = self.step(ref)
        blobs = self.blobs(step)
        contents = self.read_blobs(blobs.values())
        self.store.reset_to({path: contents[blob] for path, blob in blobs.items()})
        return step

    def _write_state(self, ref: int | str | Step, target: Path) -> None:
        blobs = self.blobs(ref)
        contents = self.read_blobs(blobs.values())
        target.mkdir(parents=True, exist_ok=True)
        for path, blob in blobs.items():
            host = target.joinpath(*path[len(ROOT) + 1 :].split("/"))
            host.parent.mkdir(parents=True, exist_ok=True)
            host.write_bytes(contents[blob])

    def diff(self, a: int | str | Step, b: int | str | Step) -> StateDiff:
        """Compare two steps: paths added, removed and modified, and a unified diff."""
        first, second = self.step(a).commit, self.step(b).commit
        status = self._git("diff", "--no-renames", "--name-status", "-z", first, second)
        parts = [p.decode("utf-8") for p in status.split(b"\0") if p]
        added: list[str] = []
        removed: list[str] = []
        modified: list[str] = []
        for code, path in zip(parts[::2], parts[1::2], strict=True):
            virtual = f"{ROOT}/{path}"
            {"A": added, "D": removed}.get(code[0], modified).append(virtual)
        patch = self._git("diff", "--no-renames", "--no-color", first, second)
        return StateDiff(added, removed, modified, patch.decode("utf-8", "replace"))

    def verify(self) -> VerifyReport:
        """Replay every step into a scratch folder and check it hashes to its snapshot's tree."""
        steps = self.steps()
        mismatches: list[str] = []
        with tempfile.TemporaryDirectory(prefix="memdir-verify-") as scratch:
            for step in steps:
                folder = Path(scratch) / f"step-{step.index}"
                self._write_state(step, folder)
                tree = self._tree_of(folder, Path(scratch) / f"index-{step.index}")
                if tree != step.tree:
                    mismatches.append(
                        f"step {step.index} ({step.commit[:10]}): rebuilt tree {tree[:10]} "
                        f"differs from recorded tree {step.tree[:10]}"
                    )
        return VerifyReport(len(steps), mismatches)

    def _tree_of(self, folder: Path, index_file: Path) -> str:
        env = {
            "GIT_DIR": str(self.root / ".git"),
            "GIT_WORK_TREE": str(folder),
            "GIT_INDEX_FILE": str(index_file),
        }
        self._git("add", "-A", "--", ".", env=env, cwd=folder)
        return self._git("write-tree", env=env, cwd=folder).decode().strip()
