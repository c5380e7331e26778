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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from memdir.store._conflicts import record_conflicts
from memdir.store._frontmatter import slugify
from memdir.store._paths import ROOT
from memdir.store._store import STATE_DIR, Store
from memdir.store.history import (
    _CONFIG,
    _IDENTITY,
    History,
    HistoryError,
    _ensure_lines,
    author_env,
    commit_message,
)

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
_PUSH_ATTEMPTS: Final = 10
_BACKOFF_BASE: Final = 0.05
"""Longest wait, in seconds, after a first lost push race; it doubles with each one."""
_BACKOFF_CAP: Final = 1.0
"""Longest wait, in seconds, after a push lost a race."""
_LOOSE_PER_FOLDER: Final = (6700 + 255) // 256
"""git's ``gc.auto`` threshold of loose objects, per folder of ``.git/objects``."""
_UNPACK_LIMIT: Final = 1000
"""A fetch of fewer objects leaves them loose, where a merge reads them in process."""
_PACK_LIMIT: Final = 50
"""git's ``gc.autoPackLimit``: more packs than this and ``gc --auto`` repacks."""
_OBJECT_ID: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
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
    waited: float = 0.0
    """Seconds spent waiting after lost push races."""
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
        self._seen = store.generation
        self._ready = False
        self._config_cache: tuple[tuple[int, ...], dict[str, str]] | None = None

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

    def setup(self) -> dict[str, str]:
        """Start a history if needed and configure memdir's merge driver; idempotent.

        Returns:
            The repository's configuration (``key -> value``), as set up.
        """
        if not self._ready or not self.history.initialized:
            self.history.init()
            _ensure_lines(self.root / ".git" / "info" / "attributes", _MERGE_ATTRIBUTES)
        config = self._config()
        driver = f"{shlex.quote(sys.executable)} -m memdir.store._merge %O %A %B %P"
        wanted = {"merge.memdir.name": "memdir memory-file merge",
                  "merge.memdir.driver": driver}
        if not config.get("memdir.replica"):
            wanted["memdir.replica"] = self._name or _default_name(self.root)
        for key, value in wanted.items():
            if config.get(key) != value:
                self.history._git("config", key, value)
                config[key] = value
        self._ready = True  # the next sync of this object reads the configuration only
        return config

    def _config(self) -> dict[str, str]:
        """The repository's own configuration, read by git again only once its file changed."""
        try:
            st = os.stat(self.root / ".git" / "config")
            seen: tuple[int, ...] | None = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            seen = None
        if seen is not None and self._config_cache is not None and \
                self._config_cache[0] == seen:
            return dict(self._config_cache[1])
        raw = self.history._git("config", "--local", "-z", "--list", check=False)
        pairs = (item.partition("\n") for item in raw.decode("utf-8", "replace").split("\0"))
        found = {key: value for key, _, value in pairs if key}
        self._config_cache = None if seen is None else (seen, found)
        return dict(found)

    @property
    def name(self) -> str:
        """This replica's name, as commits record it."""
        if self._name:
            return self._name
        if self.history.initialized:
            found = self._config().get("memdir.replica")
            if found:
                return found
        return _default_name(self.root)

    @property
    def url(self) -> str | None:
        """The remote's address, or None when the store has none."""
        if not self.history.initialized:
            return None
        return self._config().get(f"remote.{REMOTE}.url") or None

    # -- syncing -------------------------------------------------------------------

    def sync(self, *, writers: Sequence[str] = (), message: str | None = None) -> SyncReport:
        """Exchange changes with the remote; see the module's description.

        Cost: a few git processes, one fetch and one push, plus work that grows
        with what changed (files written, files both sides changed), not with
        the store; ``git add`` stats every file.

        Args:
            writers: Who made the changes not yet recorded (agents, tokens); named
                in the snapshot's author and trailers.
            message: The snapshot's message (default ``sync: changes on <replica>``).

        Raises:
            SyncError: No remote, git missing or too old, a push that kept losing
                races, or a store file that cannot be written.
        """
        started = time.monotonic()
        config = self.setup() if self.history.initialized else {}
        if not config.get(f"remote.{REMOTE}.url"):
            raise SyncError(
                f"The store at {self.root} has no remote. Name one with "
                "`memdir history STORE remote URL` (or clone it with `memdir clone`)."
            )
        name = self._name or config["memdir.replica"]
        report = SyncReport(name, config[f"remote.{REMOTE}.url"])
        heads = self._heads()
        with self.store.locked():
            disk, report.snapshot = self._record(heads.get("HEAD"), writers, message, name)
        tracking = heads.get(_TRACKING)
        if heads.get("HEAD") is not None and heads.get("HEAD") != tracking:
            # Commits the remote lacks (a hand-made `git merge` among them) may hold a
            # conflict block: list their files for the listings.
            record_conflicts(self.root, self._touched(tracking, disk or heads["HEAD"]))
        # ``disk`` is the commit the store's files and HEAD are at; ``head`` is the local
        # side of the next merge: ``disk``, or the merge a lost push race left unsent (it
        # already holds the remote as it was then, so the next round merges only what
        # came since, and the store is written once, at the end).
        head = disk
        carried_kept: list[str] = []
        merges = 0  # merge commits of this sync in ``head``'s line
        interrupted = 0
        for attempt in range(1, _PUSH_ATTEMPTS + 1):
            report.attempts = attempt
            try:
                self._fetch()
            except _Unreachable as exc:
                report.offline = str(exc)
                break
            remote = self._tracking()
            # When the fetch brought nothing the refs alone say which side has what.
            # Otherwise the merge is made first (its tree tells whether either side was
            # already in the other) and the counts for the report after the push, so no
            # comparison runs in the window in which another replica's push can land.
            known = self._counts(heads, report.snapshot, head, remote)
            counted = known is not None
            ahead = behind = 0
            target: str | None
            if known is None:
                assert head is not None and remote is not None
                target, kept = self._plan(head, remote, name, self._tip(remote), check=True)
            else:
                ahead, behind, tip = known
                if not ahead and not behind and head == disk:
                    break
                target, kept = self._target(head, remote, ahead, behind, name, tip)
            pushing = target is not None and target != remote
            made = 1 if target not in (head, remote) else 0
            if pushing:
                assert target is not None
                try:
                    pushed = self._push(target)
                except _Unreachable as exc:
                    report.offline = str(exc)
                    break
                if not pushed:
                    if target != head:  # keep the merge: the next round builds on it
                        head, carried_kept, merges = target, carried_kept + kept, merges + 1
                    self._back_off(attempt, report)
                    continue
            if counted and not merges:
                report.sent += ahead + made if pushing else 0
            else:  # counted now, after the push: what this sync's line holds
                sent, behind = self._recount(disk, remote, merges + made if pushing else None)
                report.sent += sent
            if target is not None and target != disk:
                moved = self._bring(disk, target, remote, report, writers, name)
                if moved is not None:  # written meanwhile: recorded, merged next round
                    disk = head = moved
                    carried_kept, merges = [], 0
                    interrupted += 1
                    if interrupted >= 3:
                        raise SyncError(
                            "the store kept changing while the sync ran without the store's "
                            "lock; nothing is lost; sync again once the other writer stops.")
                    continue
                report.received += behind
                report.kept += carried_kept + kept
            break
        else:
            raise SyncError(
                f"{report.remote} kept moving: {_PUSH_ATTEMPTS} pushes in a row lost a race "
                "with other replicas. Everything is recorded locally; run the sync again."
            )
        self._tidy(report)
        report.seconds = time.monotonic() - started
        return report

    def _tidy(self, report: SyncReport) -> None:
        """Pack objects when git would (``gc --auto``), after the push, not before it.

        git's own tests, made here without a process: more than ``gc.auto`` (6,700)
        loose objects, estimated from one of the 256 folders they sit in, or more
        than ``gc.autoPackLimit`` (50) packs. Not after a sync that could not reach
        the remote. (The snapshot's ``git commit`` and the fetch run no maintenance
        of their own: both sit before the push.)
        """
        if report.offline is not None:
            return
        objects = self.root / ".git" / "objects"
        try:
            loose = len(os.listdir(objects / "17"))
        except OSError:
            loose = 0
        try:
            packs = sum(1 for name in os.listdir(objects / "pack") if name.endswith(".pack"))
        except OSError:
            packs = 0
        if loose > _LOOSE_PER_FOLDER or packs > _PACK_LIMIT:
            self.history._git("maintenance", "run", "--auto", "--quiet", check=False)

    def _target(self, head: str | None, remote: str | None, ahead: int, behind: int,
                name: str, tip: tuple[str, str] | None) -> tuple[str | None, list[str]]:
        """Where this round moves to, and the files kept over a delete (see :meth:`_plan`)."""
        if not behind:
            return head, []
        if not ahead:
            return remote, []
        assert head is not None and remote is not None
        return self._plan(head, remote, name, tip)

    @staticmethod
    def _back_off(attempt: int, report: SyncReport) -> None:
        """Wait a little after a lost push race, before the next round.

        The winner is done, so the next round comes soon: after a random wait up to a
        bound that doubles with each race lost (full jitter), so replicas that collide
        again and again spread out.
        """
        pause = random.uniform(0, min(_BACKOFF_CAP, _BACKOFF_BASE * 2 ** (attempt - 1)))
        time.sleep(pause)
        report.waited += pause

    def _recount(self, disk: str | None, remote: str | None,
                 made: int | None) -> tuple[int, int]:
        """(commits sent, commits received) of a sync whose rounds were not all counted.

        ``made`` is the number of this sync's merge commits the push sent, or None
        when nothing was pushed.
        """
        unsent, came, _ = self._compare(disk, remote)
        return (0 if made is None else unsent + made), came

    def _counts(self, heads: dict[str, str], snapshot: str | None, head: str | None,
                remote: str | None) -> tuple[int, int, tuple[str, str] | None] | None:
        """(ahead, behind, the remote's tip) when told without a merge; else None.

        Compared when a merge cannot be needed or nothing will be pushed: one side
        is empty or both are the same, or this replica has nothing new (then the
        remote's commits are taken as they are, with no push to race).
        """
        known = self._known(heads, snapshot, head, remote)
        unchanged = snapshot is None and head == heads.get("HEAD") == heads.get(_TRACKING)
        if known is None and (head is None or remote is None or head == remote or unchanged):
            return self._compare(head, remote)
        return known

    def _known(self, heads: dict[str, str], snapshot: str | None, head: str | None,
               remote: str | None) -> tuple[int, int, None] | None:
        """The counts :meth:`_compare` gives, when the refs alone tell them; else None.

        So when the fetch brought nothing: the remote is where this replica's last
        sync left it, and ``head`` is that commit or this sync's snapshot on top.
        """
        here, there = heads.get("HEAD"), heads.get(_TRACKING)
        if remote is None or remote != there or here != there:
            return None
        if head == remote:
            return 0, 0, None
        if snapshot is not None and head == snapshot:
            return 1, 0, None  # the snapshot's one parent is the remote
        return None

    def _tree_of(self, commit: str) -> str:
        """A commit's tree: from its loose object, else from git."""
        found = self._tip(commit)
        if found is not None:
            return found[0]
        return self.history._git("log", "-1", "--format=%T", commit).decode().strip()

    def _tip(self, commit: str | None) -> tuple[str, str] | None:
        """A commit's (tree, message) read from its loose object, or None (git tells then)."""
        from memdir.store._objects import read_loose

        found = read_loose(self.root / ".git", commit) if commit else None
        if found is None or found[0] != "commit":
            return None
        head, _, body = found[1].partition(b"\n\n")
        first = head.split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            return None
        return first[5:].decode("ascii"), body.decode("utf-8", "replace")

    def _compare(self, head: str | None, remote: str | None
                 ) -> tuple[int, int, tuple[str, str] | None]:
        """(commits only ``head`` has, commits only ``remote`` has, remote's (tree, message)).

        One git process: the commits of either side only, each marked with its side,
        and the remote's newest among them with its tree and message (None when the
        remote has no commit ``head`` lacks).
        """
        if head is None or remote is None:
            return (self._count(head) if head else 0), (self._count(remote) if remote else 0), \
                None
        if head == remote:
            return 0, 0, None
        out = self.history._git("log", "--left-right", "--format=%m%H %T%x00%B%x1e",
                                f"{head}...{remote}").decode("utf-8", "replace")
        ahead = behind = 0
        tip: tuple[str, str] | None = None
        for record in out.split("\x1e"):
            record = record.lstrip("\n")
            if not record:
                continue
            ids, _, body = record.partition("\0")
            side, (commit, _, tree) = ids[0], ids[1:].partition(" ")
            if side == "<":
                ahead += 1
            else:
                behind += 1
                if commit == remote:
                    tip = (tree, body)
        return ahead, behind, tip

    def _refs(self) -> dict[str, str]:
        """This replica's HEAD and its copy of the remote's branch (absent ones left out)."""
        raw = self.history._git("for-each-ref", "--format=%(objectname) %(refname)",
                                f"refs/heads/{BRANCH}", _TRACKING).decode()
        found = {ref: oid for oid, _, ref in (ln.partition(" ") for ln in raw.splitlines())}
        if f"refs/heads/{BRANCH}" in found:
            found["HEAD"] = found[f"refs/heads/{BRANCH}"]
        return found

    def _heads(self) -> dict[str, str]:
        """As :meth:`_refs`, from the refs' files when both are loose (no git process)."""
        here, there = self._loose(f"refs/heads/{BRANCH}"), self._loose(_TRACKING)
        if here is None or there is None:
            return self._refs()
        return {f"refs/heads/{BRANCH}": here, "HEAD": here, _TRACKING: there}

    def _tracking(self) -> str | None:
        """This replica's copy of the remote's branch, as the last fetch left it.

        Read from the ref's file when git keeps it loose (a fetch writes it so),
        else from git.
        """
        return self._loose(_TRACKING) or self._refs().get(_TRACKING)

    def _loose(self, ref: str) -> str | None:
        """The commit a loose ref's file names, or None (packed, absent or unreadable)."""
        try:
            text = (self.root / ".git" / ref).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return text if _OBJECT_ID.fullmatch(text) else None

    def _record(self, head: str | None, writers: Sequence[str], message: str | None,
                name: str) -> tuple[str | None, str | None]:
        """Snapshot uncommitted changes (the caller holds the lock): (HEAD, new commit or None).

        One ``git add`` and one ``git commit`` that records nothing when nothing changed,
        with no maintenance of its own (git's would start another process here, before
        the push; :meth:`_tidy` packs after it).
        """
        self._seen = self.store.generation
        self.history._add_all()
        names = [w for w in dict.fromkeys(" ".join(w.split()) for w in writers) if w]
        trailers = [("Memdir-Replica", name), *(("Memdir-Writer", w) for w in names)]
        author = names[0] if len(names) == 1 else ("several writers" if names else None)
        done = subprocess.run(
            ["git", *_CONFIG, "-c", "maintenance.auto=false", "commit", "-q", "--no-verify", "-m",
             commit_message(message or f"sync: changes on {name}", trailers)],
            cwd=self.root, env={**_local_env(self.root), **(author_env(author) or {})},
            stdin=subprocess.DEVNULL, capture_output=True, check=False)
        if done.returncode != 0:
            said = (done.stdout + done.stderr).decode("utf-8", "replace")
            if "nothing to commit" in said or "nothing added to commit" in said or \
                    "no changes added to commit" in said:
                return head, None
            raise SyncError(f"git commit failed in {self.root}: {said.strip()}")
        commit = self._loose(f"refs/heads/{BRANCH}") or \
            self.history._git("rev-parse", "HEAD").decode().strip()
        return commit, commit

    def _code(self, *args: str) -> int:
        """The exit status of a local git command (for the ones that answer by it)."""
        done = subprocess.run(["git", *_CONFIG, *args], cwd=self.root, env=_local_env(self.root),
                              stdin=subprocess.DEVNULL, capture_output=True, check=False)
        return done.returncode

    def _bring(self, head: str | None, target: str, remote: str | None, report: SyncReport,
               writers: Sequence[str], name: str) -> str | None:
        """Move the store's files and HEAD from ``head`` to ``target``, under the lock.

        Returns:
            None once done; or, when the store was written since its snapshot, the
            commit that now records that write (the store is left as it was, for
            the next round to merge).
        """
        from memdir.store._integrate import EMPTY_TREE, MovedError, apply_trees, new_conflicts

        with self.store.locked():
            if self.store.generation != self._seen:  # written since the snapshot
                now, made = self._record(head, writers, None, name)
                if made is not None:
                    return made
            try:
                # Commits name their trees: diff-tree reads them without a rev-parse first.
                applied = apply_trees(self.history, head or EMPTY_TREE, target)
            except MovedError:
                # Written behind the lock's back: record it, merge it next round.
                now, made = self._record(head, writers, None, name)
                if made is None:
                    raise SyncError("a store file changed while the sync ran and could not be "
                                    "recorded; nothing is lost; sync again.") from None
                return made
            except OSError as exc:
                raise SyncError(f"the sync could not write the store at {self.root}: {exc}; "
                                "nothing is lost (every state is in the history), fix the "
                                "cause and sync again.") from None
            self.history._git("reset", "-q", target)
            self.store.note_change()
            self._seen = self.store.generation
        report.changed += applied.paths
        if head is not None and remote is not None and target != remote:
            report.merged = True
            report.conflicts += new_conflicts(self.history, head, remote, applied.written)
        record_conflicts(self.root, applied.written)
        return None

    def _plan(self, head: str, remote: str, name: str,
              tip: tuple[str, str] | None = None, *, check: bool = False
              ) -> tuple[str, list[str]]:
        """Where the store moves to from ``head`` and ``remote``, and the files kept over a delete.

        ``remote`` when the merge gives exactly its files, else a new merge commit of the
        two. ``tip`` is the remote's tree and message, when known already. With
        ``check``, the two are not known to both have commits the other lacks: a merge
        that gives exactly ``head``'s files is then checked, and when the remote is in
        ``head``'s history already the answer is ``head`` itself (no merge commit).
        """
        from memdir.store._integrate import merge_commits
        from memdir.store._merge import Labels

        remote_tree, body = tip or self.history._git(
            "log", "-1", "--format=%T%x00%B", remote).decode().split("\0", 1)
        labels = Labels(f"replica {name}", f"replica {_replica_in(body)}")
        message = f"sync: merge {REMOTE}/{BRANCH} into {name}\n\nMemdir-Replica: {name}\n"
        tree, kept, made = merge_commits(self.history, head, remote, labels, message=message)
        if tree == remote_tree:
            # Every local change is in the remote already (another replica made the same
            # change, or merged this one's): move to it instead of recording an empty merge.
            return remote, kept
        if check and tree == self._tree_of(head) and not self._compare(head, remote)[1]:
            return head, []
        commit = made or self.history._git("commit-tree", tree, "-p", head, "-p", remote,
                                           "-m", message).decode().strip()
        return commit, kept

    # -- git helpers -------------------------------------------------------------------

    def _touched(self, since: str | None, head: str) -> list[str]:
        """The store files ``head`` added or changed since ``since`` (None: ever)."""
        raw = self.history._git("diff-tree", "-r", "-z", "--name-only", "--diff-filter=AM",
                                since or _EMPTY_TREE, head)
        return [f"{ROOT}/{p.decode('utf-8', 'surrogateescape')}" for p in raw.split(b"\0") if p]

    def _count(self, spec: str) -> int:
        return int(self.history._git("rev-list", "--count", spec).decode().strip() or 0)

    def _fetch(self) -> None:
        # No `git maintenance` at the end of each fetch: it would run between the fetch
        # and the push (the window of a lost race); :meth:`_tidy` runs it after a sync.
        # What a fetch brings stays loose up to _UNPACK_LIMIT objects (git's default is
        # 100), so the merge reads it without a git process.
        self._network("-c", f"fetch.unpackLimit={_UNPACK_LIMIT}", "fetch", "-q", "--no-tags",
                      "--no-write-fetch-head",
                      "--no-auto-maintenance", REMOTE,
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
        env.update({**_IDENTITY, **_placed(self.root), "GIT_TERMINAL_PROMPT": "0"})
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
                      else f"git {next(a for a in args if not a.startswith('-'))} failed")
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


def _replica_in(body: str) -> str:
    """The replica a commit message names, or the remote's branch when it names none."""
    found = re.findall(r"^Memdir-Replica: (.+)$", body, re.MULTILINE)
    return found[-1].strip() if found else f"{REMOTE}/{BRANCH}"


def _local_env(root: Path | None = None) -> dict[str, str]:
    """The environment of a local git command, as :class:`History` runs them.

    With ``root``, the repository is named (``GIT_DIR``, ``GIT_WORK_TREE``) and git
    never climbs above it, so it cannot work in a repository around the store.
    """
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env = {**base, **_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_TERMINAL_PROMPT": "0"}
    if root is not None:
        env.update(_placed(root))
    return env


def _placed(root: Path) -> dict[str, str]:
    return {"GIT_DIR": str(root / ".git"), "GIT_WORK_TREE": str(root),
            "GIT_CEILING_DIRECTORIES": str(root.parent)}


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

