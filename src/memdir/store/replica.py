"""Replicas: full clones of a store's history, kept in step through any git remote.

A replica is a store whose history (:mod:`memdir.store.history`) has a remote
named ``origin``: a bare repository reached over ``file://``, ``git daemon``,
SSH or a forge. :meth:`Replica.sync` exchanges changes with it:

1. the store's uncommitted changes become a snapshot (under the write lock);
2. the remote's ``main`` is fetched;
3. the two are merged with ``git merge-tree`` (git's own merge, which calls
   memdir's merge driver, :mod:`memdir.store._merge`, for every file both sides
   changed), in memory, so no half-merged file or git conflict marker ever
   reaches the store;
4. under the write lock again, the merge is committed and the files it changed
   are written atomically, one by one, through the store's folder handles (a
   file that changed since the snapshot makes the step start over, so nothing
   uncommitted is ever overwritten);
5. the result is pushed; a push that lost a race with another replica goes
   back to step 2, a few times, after a short random wait.

A remote that cannot be reached leaves the store as it was with its changes
recorded, and the report says so in one line; the next sync sends them.

Configuration: local git commands run as :class:`~memdir.store.history.History`
runs them (no user or system git configuration). Commands that talk to the
remote (fetch, push) read the user's and the system's git configuration and
keep the ``GIT_SSH*``, ``GIT_ASKPASS`` and proxy variables, so credential
helpers, SSH keys and URL rewrites work as they do for ``git`` itself; they run
without a terminal (no password prompt can hang a sync) and with a time limit,
and hooks stay off.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from memdir.store._conflicts import find_blocks, has_conflict, record_conflicts
from memdir.store._frontmatter import slugify
from memdir.store._paths import ROOT, lstat_at, open_dir, open_root, read_at, remove_at, write_at
from memdir.store._store import STATE_DIR, Store
from memdir.store.history import _CONFIG, _IDENTITY, History, HistoryError, _blob_id, _ensure_lines

__all__ = [
    "BRANCH",
    "REMOTE",
    "Commit",
    "Replica",
    "SyncError",
    "SyncReport",
    "commits",
]

REMOTE: Final = "origin"
BRANCH: Final = "main"
_TRACKING: Final = f"refs/remotes/{REMOTE}/{BRANCH}"
_EMPTY_TREE: Final = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_MERGE_ATTRIBUTES: Final = (
    "# memdir: every file merges with memdir's merge driver (defined in .git/config).",
    "* merge=memdir",
)
_TRANSPORT_ENV: Final = frozenset({
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
    "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_HTTP_USER_AGENT",
})
"""The user's git variables a fetch or push keeps: how to reach the remote, nothing else."""
_NETWORK_SECONDS: Final = 120.0
_PUSH_ATTEMPTS: Final = 8
_FILE_MODES: Final = frozenset({"100644", "100755"})
_REJECTED: Final = re.compile(r"^!\t.*\[(rejected|remote rejected)\]", re.MULTILINE)
_RACE: Final = ("fetch first", "non-fast-forward", "stale info", "cannot lock ref",
                "failed to update ref", "incorrect old value")


class SyncError(HistoryError):
    """A sync that cannot go on for a reason other than an unreachable remote."""


class _Unreachable(Exception):
    """The remote could not be reached; the message is git's reason, in one line."""


@dataclass(slots=True)
class SyncReport:
    """What one sync did."""

    replica: str
    remote: str
    snapshot: str | None = None
    """The commit recording this replica's own changes, if there were any."""
    sent: int = 0
    """Commits of this replica the remote did not have, now pushed."""
    received: int = 0
    """Commits of the remote this replica did not have, now merged in."""
    merged: bool = False
    """Both sides had new commits, and a merge commit joined them."""
    changed: list[str] = field(default_factory=list)
    """Store files the sync wrote or removed (agent paths)."""
    conflicts: list[str] = field(default_factory=list)
    """Files that gained a conflict block in this sync."""
    kept: list[str] = field(default_factory=list)
    """Files edited on one side and deleted (or renamed twice) on the other: edits kept."""
    offline: str | None = None
    """Why the remote could not be reached (None when it was)."""
    attempts: int = 0
    """Fetch-merge-push rounds (more than one when a push lost a race)."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The remote was reached and now holds everything this replica has."""
        return self.offline is None

    def summary(self) -> str:
        """One line a person reads."""
        if self.offline is not None:
            kept = "changes recorded locally" if self.snapshot else "nothing new to send"
            return (f"{self.replica}: {self.remote} is unreachable ({self.offline}); "
                    f"working locally, {kept}; the next sync catches up.")
        parts = [f"sent {self.sent}", f"received {self.received} commit(s)"]
        if self.merged:
            parts.append("merged")
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} conflict(s) kept in "
                         + ", ".join(self.conflicts[:5]) + (" ..." if len(self.conflicts) > 5
                                                            else ""))
        if self.kept:
            parts.append(f"kept {len(self.kept)} edited file(s) the other side deleted")
        retries = f", {self.attempts - 1} push race(s) lost and retried" if self.attempts > 1 \
            else ""
        return f"{self.replica}: synced with {self.remote}: {', '.join(parts)}{retries}."


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit of the whole history graph, with who made it and where."""

    commit: str
    time: str
    author: str
    replica: str | None
    writers: tuple[str, ...]
    title: str
    parents: int


class Replica:
    """A store's history with a remote, and the sync that keeps the two in step.

    Args:
        store: The store (its root holds, or will hold, the repository).
        name: This replica's name in commits; default: the one recorded in the
            repository (``memdir.replica``), else ``<host>-<folder>``.
        timeout: Seconds a fetch or a push may take before it counts as offline.
    """

    def __init__(self, store: Store, *, name: str | None = None,
                 timeout: float = _NETWORK_SECONDS) -> None:
        self.store = store
        self.root = store.root
        self.history = History(store)
        self.timeout = timeout
        self._name = name

    def __repr__(self) -> str:
        return f"Replica({str(self.root)!r})"

    # -- set-up --------------------------------------------------------------------

    @classmethod
    def clone(cls, url: str, dest: str | os.PathLike[str], *, name: str | None = None,
              timeout: float = _NETWORK_SECONDS) -> tuple[Replica, SyncReport]:
        """Make a new replica of the store at ``url`` in the new or empty folder ``dest``.

        An empty remote gives an empty replica whose first sync fills the remote.

        Returns:
            The replica and the report of its first sync.

        Raises:
            SyncError: ``dest`` holds files, or the remote cannot be reached.
        """
        target = Path(dest).expanduser()
        if target.exists() and any(p.name != STATE_DIR for p in target.iterdir()):
            raise SyncError(f"{target} is not empty; clone into a new or empty folder.")
        replica = cls(Store(target, create=True), name=name, timeout=timeout)
        replica.attach(url)
        report = replica.sync()
        if report.offline is not None:
            raise SyncError(f"cannot clone {url}: {report.offline}. Check the address and "
                            f"that the remote is reachable; {target} was left as an empty "
                            "replica whose `memdir sync` will finish the clone.")
        record_conflicts(replica.root, replica.store.files(), replace=True)
        return replica, report

    def attach(self, url: str, *, create: bool = False) -> None:
        """Name ``url`` as this store's remote (replacing any other) and set up merging.

        Args:
            url: Any address git reaches: a path, ``file://``, ``git://``, ``ssh://``,
                ``user@host:path``, ``https://``.
            create: ``url`` is a local path where no repository exists yet: make an
                empty bare repository there for replicas to meet in.
        """
        if not url.strip():
            raise SyncError("the remote address is empty; give a path or URL git can reach.")
        url = _absolute(url)
        if create:
            _create_bare(url)
        self.setup()
        known = self.history._git("remote", check=False).decode().split()
        verb = "set-url" if REMOTE in known else "add"
        self.history._git("remote", verb, REMOTE, url)

    def setup(self) -> None:
        """Start a history if needed and configure memdir's merge driver; idempotent."""
        self.history.init()
        _ensure_lines(self.root / ".git" / "info" / "attributes", _MERGE_ATTRIBUTES)
        driver = f"{shlex.quote(sys.executable)} -m memdir.store._merge %O %A %B %P"
        current = self.history._git("config", "--get", "merge.memdir.driver", check=False)
        if current.decode().strip() != driver:
            self.history._git("config", "merge.memdir.name", "memdir memory-file merge")
            self.history._git("config", "merge.memdir.driver", driver)
        if not self.history._git("config", "--get", "memdir.replica", check=False).strip():
            self.history._git("config", "memdir.replica", self._name or _default_name(self.root))

    @property
    def name(self) -> str:
        """This replica's name, as commits record it."""
        if self._name:
            return self._name
        if self.history.initialized:
            found = self.history._git("config", "--get", "memdir.replica", check=False)
            if found.strip():
                return found.decode().strip()
        return _default_name(self.root)

    @property
    def url(self) -> str | None:
        """The remote's address, or None when the store has none."""
        if not self.history.initialized:
            return None
        found = self.history._git("config", "--get", f"remote.{REMOTE}.url", check=False)
        return found.decode().strip() or None

    # -- syncing -------------------------------------------------------------------

    def sync(self, *, writers: Sequence[str] = (), message: str | None = None) -> SyncReport:
        """Exchange changes with the remote; see the module's description.

        Args:
            writers: Who made the changes not yet recorded (agents, tokens); named
                in the snapshot's author and trailers.
            message: The snapshot's message (default ``sync: changes on <replica>``).

        Raises:
            SyncError: No remote, git missing or too old, a push that kept losing
                races, or a store file that cannot be written.
        """
        started = time.monotonic()
        url = self.url
        if url is None:
            raise SyncError(
                f"The store at {self.root} has no remote. Name one with "
                "`memdir history STORE remote URL` (or clone it with `memdir clone`)."
            )
        self.setup()
        report = SyncReport(self.name, url)
        with self.store.locked():
            report.snapshot = self._record(writers, message)
        head = self._rev("HEAD")
        if head is not None:  # what this replica has that the remote lacks may hold a
            # conflict kept by a hand-made `git merge`: list it for the listings
            record_conflicts(self.root, self._touched(self._rev(_TRACKING), head))
        for attempt in range(1, _PUSH_ATTEMPTS + 1):
            report.attempts = attempt
            try:
                self._fetch()
            except _Unreachable as exc:
                report.offline = str(exc)
                break
            remote = self._rev(_TRACKING)
            if remote is not None:
                self._integrate(remote, report, writers)
            head = self._rev("HEAD")
            if head is None or head == remote:
                break
            sent = self._count(f"{remote}..{head}" if remote else head)
            try:
                pushed = self._push(head)
            except _Unreachable as exc:
                report.offline = str(exc)
                break
            if pushed:
                report.sent += sent
                break
            time.sleep(random.uniform(0.05, 0.2) * attempt)
        else:
            raise SyncError(
                f"{url} kept moving: {_PUSH_ATTEMPTS} pushes in a row lost a race with other "
                "replicas. Everything is recorded locally; run the sync again."
            )
        report.seconds = time.monotonic() - started
        return report

    def _record(self, writers: Sequence[str], message: str | None) -> str | None:
        """Snapshot uncommitted changes (the caller holds the lock); the commit or None."""
        self.history._add_all()
        if self._rev("HEAD") is not None:
            if self._code("diff", "--cached", "--quiet", "HEAD") == 0:
                return None
        elif not self.history._git("ls-files", "-z"):
            return None
        names = [w for w in dict.fromkeys(" ".join(w.split()) for w in writers) if w]
        trailers = [("Memdir-Replica", self.name), *(("Memdir-Writer", w) for w in names)]
        author = names[0] if len(names) == 1 else ("several writers" if names else None)
        return self.history.snapshot(message or f"sync: changes on {self.name}",
                                     author=author, trailers=trailers)

    def _code(self, *args: str) -> int:
        """The exit status of a local git command (for the ones that answer by it)."""
        done = subprocess.run(["git", *_CONFIG, *args], cwd=self.root, env=_local_env(),
                              stdin=subprocess.DEVNULL, capture_output=True, check=False)
        return done.returncode

    def _integrate(self, remote: str, report: SyncReport, writers: Sequence[str]) -> None:
        """Bring ``remote`` into the store: fast-forward or merge, then write the files."""
        head = self._rev("HEAD")
        if head == remote or (head is not None and self._is_ancestor(remote, head)):
            return
        planned = self._plan(head, remote)
        with self.store.locked():
            if self._record(writers, None) is not None or self._rev("HEAD") != head:
                head = self._rev("HEAD")
                planned = self._plan(head, remote)
            target, kept = planned
            report.received += self._count(f"{head}..{remote}" if head else remote)
            if head is not None and target != remote:
                report.merged = True
            old_tree = self._tree(head) if head else _EMPTY_TREE
            changed = self._apply(old_tree, self._tree(target), head)
            self.history._git("reset", "-q", target)
            self.store.note_change()
        report.changed += changed
        report.kept += kept
        if head is not None and target != remote:
            report.conflicts += self._new_conflicts(head, remote, target, changed)
        record_conflicts(self.root, changed)

    def _plan(self, head: str | None, remote: str) -> tuple[str, list[str]]:
        """The commit the store moves to (``remote`` itself for a fast-forward), and kept files."""
        if head is None or self._is_ancestor(head, remote):
            return remote, []
        tree, kept = self._merge_tree(head, remote)
        message = (f"sync: merge {REMOTE}/{BRANCH} into {self.name}\n\n"
                   f"Memdir-Replica: {self.name}\n")
        commit = self.history._git("commit-tree", tree, "-p", head, "-p", remote, "-m",
                                   message).decode().strip()
        return commit, kept

    def _merge_tree(self, head: str, remote: str) -> tuple[str, list[str]]:
        """Merge two commits in memory; settle whatever git leaves conflicted."""
        labels = {"MEMDIR_MERGE_OURS": f"replica {self.name}",
                  "MEMDIR_MERGE_THEIRS": f"replica {self._replica_of(remote)}"}
        with tempfile.TemporaryDirectory(prefix="memdir-merge-") as scratch:
            # The driver's temporary files land in the working folder: a scratch one.
            env = {"GIT_DIR": str(self.root / ".git"), **labels}
            raw = self.history._git("merge-tree", "--write-tree", "-z",
                                    "--allow-unrelated-histories", head, remote,
                                    env=env, cwd=Path(scratch), check=False)
        parts = raw.split(b"\0")
        tree = parts[0].decode().strip()
        if not re.fullmatch(r"[0-9a-f]{40,64}", tree):
            raise SyncError(f"git merge-tree gave no tree for {head[:10]} and {remote[:10]} "
                            f"(git 2.38 or later is needed): {raw[:300]!r}")
        stages: dict[str, dict[int, tuple[str, str]]] = {}
        for entry in parts[1:]:
            if not entry:
                break
            meta, _, path = entry.decode("utf-8", "surrogateescape").partition("\t")
            mode, blob, stage = meta.split()
            stages.setdefault(path, {})[int(stage)] = (mode, blob)
        if not stages:
            return tree, []
        return self._settle(tree, stages, labels)

    def _settle(self, tree: str, stages: dict[str, dict[int, tuple[str, str]]],
                labels: dict[str, str]) -> tuple[str, list[str]]:
        """Replace each path git left conflicted with a merge that loses nothing."""
        from memdir.store._merge import Labels, merge_bytes

        kept: list[str] = []
        updates: list[tuple[str, str, str]] = []
        for path, found in sorted(stages.items()):
            if 2 in found and 3 in found:
                blobs = [found[s][1] for s in (1, 2, 3) if s in found]
                data = self.history.read_blobs(blobs)
                base = data[found[1][1]] if 1 in found else None
                merged = merge_bytes(base, data[found[2][1]], data[found[3][1]], path,
                                     Labels(labels["MEMDIR_MERGE_OURS"],
                                            labels["MEMDIR_MERGE_THEIRS"]))
                blob = self.history._git("hash-object", "-w", "--stdin",
                                         input=merged.data).decode().strip()
                updates.append(("100644", blob, path))
            else:
                kept.append(f"{ROOT}/{path}")  # one side's version is in the tree: the edit
        if not updates:
            return tree, kept
        with tempfile.TemporaryDirectory(prefix="memdir-index-") as scratch:
            env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            self.history._git("read-tree", tree, env=env)
            for mode, blob, path in updates:
                self.history._git("update-index", "--add", "--cacheinfo",
                                  f"{mode},{blob},{path}", env=env)
            tree = self.history._git("write-tree", env=env).decode().strip()
        return tree, kept

    def _apply(self, old_tree: str, new_tree: str, head: str | None) -> list[str]:
        """Make the store's files go from ``old_tree`` to ``new_tree``; the paths changed.

        Every file about to be replaced or removed must still hold what ``head``
        recorded; otherwise something wrote it without the lock since the
        snapshot, and the sync stops before touching anything.
        """
        raw = self.history._git("diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree)
        fields = raw.split(b"\0")
        changes: list[tuple[str, str, str, str, str]] = []  # status, mode, old, new, path
        for meta, name in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(b":"):
                continue
            _old_mode, new_mode, old_blob, new_blob, status = meta[1:].decode().split()
            changes.append((status[0], new_mode, old_blob, new_blob,
                            name.decode("utf-8", "surrogateescape")))
        wanted = [new for status, mode, _, new, _ in changes
                  if status != "D" and mode in _FILE_MODES]
        contents = self.history.read_blobs(wanted)
        root_fd = open_root(self.root)
        try:
            for status, _mode, old_blob, _new, path in changes:
                self._check_unchanged(root_fd, path, None if status == "A" else old_blob)
            done: list[str] = []
            for status, mode, _old, new_blob, path in changes:
                parts = tuple(path.split("/"))
                if parts[0] in (STATE_DIR, ".git"):
                    continue
                if status == "D" or mode not in _FILE_MODES:
                    _remove(root_fd, parts)  # links and submodules never enter a store
                else:
                    folder = open_dir(root_fd, parts[:-1], create=True)
                    try:
                        write_at(folder, parts[-1], contents[new_blob])
                    finally:
                        os.close(folder)
                done.append(f"{ROOT}/{path}")
        except OSError as exc:
            raise SyncError(f"the sync could not write the store at {self.root}: {exc}; "
                            "nothing is lost (every state is in the history), fix the cause "
                            "and sync again.") from None
        finally:
            os.close(root_fd)
        return done

    def _check_unchanged(self, root_fd: int, path: str, blob: str | None) -> None:
        parts = tuple(path.split("/"))
        try:
            folder = open_dir(root_fd, parts[:-1])
        except (FileNotFoundError, NotADirectoryError):
            current = None
        else:
            try:
                st = lstat_at(folder, parts[-1])
                current = None if st is None else _blob_id(read_at(folder, parts[-1]))
            except OSError:
                current = "?"
            finally:
                os.close(folder)
        if current != blob:
            raise SyncError(
                f"{ROOT}/{path} changed while the sync ran, without the store's lock; the "
                "sync stopped before writing anything. Sync again to record and merge it."
            )

    def _new_conflicts(self, head: str, remote: str, target: str,
                       changed: Iterable[str]) -> list[str]:
        """Files whose merged text holds a conflict block neither side had."""
        found: list[str] = []
        for virtual in changed:
            path = virtual[len(ROOT) + 1 :]
            merged = self._show(target, path)
            if merged is None or not has_conflict(merged):
                continue
            before = {b.id for side in (head, remote)
                      for b in find_blocks(self._show(side, path) or "")}
            if {b.id for b in find_blocks(merged)} - before:
                found.append(virtual)
        return found

    # -- git helpers -------------------------------------------------------------------

    def _touched(self, since: str | None, head: str) -> list[str]:
        """The store files ``head`` added or changed since ``since`` (None: ever)."""
        raw = self.history._git("diff-tree", "-r", "-z", "--name-only", "--diff-filter=AM",
                                since or _EMPTY_TREE, head)
        return [f"{ROOT}/{p.decode('utf-8', 'surrogateescape')}" for p in raw.split(b"\0") if p]

    def _show(self, commit: str, path: str) -> str | None:
        out = self.history._git("cat-file", "blob", f"{commit}:{path}", check=False)
        return out.decode("utf-8", "replace") if out else None

    def _rev(self, ref: str) -> str | None:
        out = self.history._git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
        return out.decode().strip() or None

    def _tree(self, commit: str) -> str:
        return self.history._git("rev-parse", f"{commit}^{{tree}}").decode().strip()

    def _count(self, spec: str) -> int:
        return int(self.history._git("rev-list", "--count", spec).decode().strip() or 0)

    def _is_ancestor(self, a: str, b: str) -> bool:
        return self._code("merge-base", "--is-ancestor", a, b) == 0

    def _replica_of(self, commit: str) -> str:
        body = self.history._git("log", "-1", "--format=%B", commit).decode()
        found = re.findall(r"^Memdir-Replica: (.+)$", body, re.MULTILINE)
        return found[-1].strip() if found else f"{REMOTE}/{BRANCH}"

    def _fetch(self) -> None:
        self._network("fetch", "-q", "--no-tags", "--no-write-fetch-head", REMOTE,
                      f"+refs/heads/{BRANCH}:{_TRACKING}", missing_ok=True)

    def _push(self, head: str) -> bool:
        """Push ``head`` as the remote's main; False when another replica pushed first."""
        out = self._network("push", "--porcelain", REMOTE, f"{head}:refs/heads/{BRANCH}",
                            race_ok=True)
        return out is not None

    def _network(self, *args: str, missing_ok: bool = False,
                 race_ok: bool = False) -> bytes | None:
        """Run a git command that talks to the remote; None for a lost push race."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GIT_") or k in _TRANSPORT_ENV}
        env.update(_IDENTITY)
        env["GIT_TERMINAL_PROMPT"] = "0"
        try:
            proc = subprocess.Popen(["git", *_CONFIG, *args], cwd=self.root, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise SyncError("git is not installed; install git to sync replicas.") from None
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise _Unreachable(f"no answer within {self.timeout:g} s") from None
        if proc.returncode == 0:
            return out
        text = (err.decode("utf-8", "replace") + out.decode("utf-8", "replace")).strip()
        if missing_ok and "couldn't find remote ref" in text:
            return out  # an empty remote: nothing to fetch yet
        if race_ok and _REJECTED.search(text) and any(word in text for word in _RACE):
            return None
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        reason = next((ln for ln in lines if ln.startswith("fatal:")), lines[-1] if lines
                      else f"git {args[0]} failed")
        raise _Unreachable(reason.removeprefix("fatal: ").rstrip("."))


def commits(history: History) -> list[Commit]:
    """Every commit of the history graph, newest first, with author, replica and writers."""
    if not history.initialized:
        return []
    if not history._git("rev-parse", "--verify", "-q", "HEAD", check=False).strip():
        return []
    fmt = "%H%x1f%cI%x1f%an%x1f%P%x1f%B%x1e"
    raw = history._git("log", "--topo-order", f"--format={fmt}", "HEAD").decode("utf-8",
                                                                                 "replace")
    found: list[Commit] = []
    for record in raw.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        commit, when, author, parents, body = record.split("\x1f", 4)
        replica = re.findall(r"^Memdir-Replica: (.+)$", body, re.MULTILINE)
        writers = tuple(w.strip() for w in re.findall(r"^Memdir-Writer: (.+)$", body,
                                                      re.MULTILINE))
        title = body.strip().split("\n", 1)[0]
        found.append(Commit(commit, when, author, replica[-1].strip() if replica else None,
                            writers, title, len(parents.split())))
    return found


def _local_env() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**base, **_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _remove(root_fd: int, parts: tuple[str, ...]) -> None:
    """Remove a file if present, then every folder it leaves empty."""
    try:
        folder = open_dir(root_fd, parts[:-1])
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        if lstat_at(folder, parts[-1]) is not None:
            remove_at(folder, parts[-1])
    finally:
        os.close(folder)
    for depth in range(len(parts) - 1, 0, -1):
        try:
            parent = open_dir(root_fd, parts[: depth - 1])
        except OSError:
            return
        try:
            os.rmdir(parts[depth - 1], dir_fd=parent)
        except OSError:
            return
        finally:
            os.close(parent)


def _default_name(root: Path) -> str:
    host = socket.gethostname().split(".")[0] or "host"
    return f"{slugify(host)}-{slugify(root.name)}"


def _is_local(url: str) -> bool:
    """Whether git reads ``url`` as a path on this machine (not ``scheme://`` or ``host:path``)."""
    return "://" not in url and not re.match(r"^[^/]+:", url)


def _absolute(url: str) -> str:
    """A local path made absolute (git resolves a relative one from the store); URLs as given."""
    return str(Path(url).expanduser().absolute()) if _is_local(url) else url


def _create_bare(url: str) -> None:
    path = Path(url.removeprefix("file://")).expanduser()
    if not (_is_local(url) or url.startswith("file://")):
        raise SyncError(f"--create makes a repository at a local path only, not at {url}; "
                        "create remote repositories with the forge or server that holds them.")
    if path.exists() and any(path.iterdir()):
        if (path / "HEAD").is_file() and (path / "objects").is_dir():
            return  # already a repository
        raise SyncError(f"{path} exists and is not a git repository; choose another path.")
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["git", *_CONFIG, "init", "-q", "--bare", str(path)],
                          env=_local_env(), capture_output=True, check=False)
    if done.returncode != 0:
        raise SyncError(f"cannot create a repository at {path}: "
                        f"{done.stderr.decode('utf-8', 'replace').strip()}")

