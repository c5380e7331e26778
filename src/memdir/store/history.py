"""A store's history: git snapshots taken at the store root, replayed and compared.

Every snapshot is one git commit of the whole store, so any past state can be
rebuilt exactly in another folder, two states can be compared, and people can
inspect the history with ordinary git commands (``git log`` inside the store).
The repository lives in ``.git`` at the root, hidden from the store's listings
because its name starts with a dot.

A snapshot records exactly the store's regular files, whatever ignore or
attribute files the store itself holds: memdir's state (``.memdir/``) and the
temporary files of atomic writes are left out by pathspec, never by ignore
rules, ignored files are added all the same, and ``.git/info/attributes`` (which
outranks any ``.gitattributes`` in the tree) turns off every content
conversion, so each blob is the file's bytes.

git is driven through its command line with an explicit author, committer and
configuration: no user or system git configuration is read, so snapshots work,
and behave the same, on machines where git was never configured.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

from memdir.progress import Progress
from memdir.progress import progress as reporter
from memdir.store._errors import StoreError
from memdir.store._feed import ChangeFeed
from memdir.store._paths import ROOT, open_dir, open_root, posix_parts, remove_at
from memdir.store._stat_record import (
    Walk,
    index_stamp,
    load_record,
    refresh,
    save_record,
    walk_tree,
)
from memdir.store._stat_record import changed as changed_since
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
    "-c", "core.fsmonitor=false",
    "-c", "init.defaultBranch=main",
    # A split index: each write of git's index writes only the entries changed since
    # its shared part was written (a shared part of 10 MB at 100,000 files is rewritten
    # once a fifth of it changed), so a snapshot of one change writes kilobytes.
    "-c", "core.splitIndex=true",
    "-c", "splitIndex.sharedIndexExpire=1.hour.ago",
)
_ISOLATED: Final = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
"""No system or user configuration: what memdir's git does depends on the store alone."""
_EXCLUDES: Final = (f"/{STATE_DIR}/", ".tmp-*.part")
"""Listed in ``.git/info/exclude`` too, so plain ``git status`` in the store agrees."""
_PATHSPEC: Final = (
    "--", ".", f":(exclude,top){STATE_DIR}", ":(exclude,glob)**/.tmp-*.part",
)
"""What a snapshot records: everything under the root but memdir's state and temporary files."""
_ATTRIBUTES: Final = (
    "# memdir: snapshots hold each file's exact bytes, whatever .gitattributes the store holds.",
    "* -text !eol !filter !ident !working-tree-encoding !export-subst !export-ignore",
)
_FILE_MODES: Final = frozenset({"100644", "100755"})
_STATE_SPECS: Final = (f":(top){STATE_DIR}", ":(top,glob)**/.tmp-*.part")
"""What :data:`_PATHSPEC` leaves out, as pathspecs that match it (for ``git rm --cached``)."""
_ADD_CHUNK: Final = 256
"""Paths per ``git add`` command (each at most 1,024 bytes: well under the argument limit)."""
"""Entries of a snapshot that are store files; links (120000) are not part of a store."""
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
        self._feed: ChangeFeed | None = None
        """What changed since the last snapshot, once one was taken (see :meth:`snapshot`)."""
        self.full_stages = 0
        """Snapshots of this object that staged the whole tree with ``git add``."""
        self._walk: Walk | None = None
        """What the snapshot being taken saw of each file, saved as its record once made."""
        self._stamp: bytes | None = None
        """The index and HEAD this object's last snapshot left (None: none taken yet)."""
        self._unsaved: bool | None = False
        """The record in memory is newer than the saved one (None: a walk is being staged)."""

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
        try:
            done = subprocess.run(
                ["git", *_CONFIG, *args],
                cwd=cwd or self.root,
                input=input,
                env=self._git_env(env),
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

    def _git_env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of every git process: this store's repository, no user settings."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        # The repository is named, never searched for: with no .git at the root git
        # would otherwise climb to a repository around the store (a user's project).
        place = {
            "GIT_DIR": str(self.root / ".git"),
            "GIT_WORK_TREE": str(self.root),
            "GIT_CEILING_DIRECTORIES": str(self.root.parent),
        }
        return {
            **base, **_IDENTITY, **_ISOLATED, **place, "GIT_TERMINAL_PROMPT": "0",
            **(env or {}),
        }

    @property
    def initialized(self) -> bool:
        """Whether the store root holds its own git repository.

        Raises:
            HistoryError: ``.git`` at the root is a link or a file (a ``gitdir:``
                pointer): memdir never makes one, and git would follow it elsewhere.
        """
        try:
            mode = os.lstat(self.root / ".git").st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(mode):
            raise HistoryError(
                f"{self.root / '.git'} is not a folder memdir made (a link or a file); "
                "memdir will not follow it. Remove it, then start the history again with "
                "`memdir history STORE init`."
            )
        return True

    def _require(self) -> None:
        if not self.initialized:
            raise HistoryError(
                f"The store at {self.root} has no history yet. "
                "Start one with `memdir history STORE init`."
            )

    # -- recording -------------------------------------------------------------

    def init(self) -> None:
        """Create the repository if missing and pin how it records files; idempotent.

        Done under the store's lock, so it never takes up a ``.git`` that a shell
        command running at that moment made (the shell tool removes any such one
        before it lets the lock go).
        """
        with self.store.locked():
            self._init()

    def _init(self) -> None:
        if not self.initialized:
            self._git("init", "-q")
        info = self.root / ".git" / "info"
        _ensure_lines(info / "exclude", _EXCLUDES)
        _ensure_lines(info / "attributes", _ATTRIBUTES)

    def _add_all(self, *, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
        """Stage every file of the tree, ignored ones included, as its exact bytes."""
        self._git("add", "--all", "--force", *_PATHSPEC, env=env, cwd=cwd)

    def snapshot(
        self,
        message: str,
        *,
        author: str | None = None,
        trailers: Iterable[tuple[str, str]] = (),
    ) -> str:
        """Record the store's current state as a new step and return its commit id.

        A snapshot with no change still records a step, so a trajectory keeps one
        step per chunk or task. The store's write lock is held while the state is
        read, so a concurrent writer cannot leave a half-made state in a snapshot.

        The first snapshot of this object stages the whole tree (``git add --all``,
        which stats every file). It also starts a change feed
        (:mod:`memdir.store._feed`), so each later snapshot of the same object stages
        only the paths the feed names, whoever changed them: an object that lives
        across many snapshots (a build, a skills run) pays for each step in
        proportion to its changes, plus git's rewrite of its index. Without a live
        feed every snapshot stages the whole tree. (The feed follows the files, not
        git's index: whoever changes the index by hand between two snapshots, say with
        ``git rm --cached``, has it repaired by the first snapshot of a new object.)

        Args:
            message: Names the unit the step belongs to, e.g. ``"chunk 12"``.
            author: Who made the change (an agent, a token's name); the commit's
                author name. Default ``memdir``.
            trailers: ``(key, value)`` lines added at the end of the message, e.g.
                ``("Memdir-Replica", "laptop")``, as git trailers.
        """
        if not message.strip():
            raise HistoryError("A snapshot needs a message naming its unit, e.g. 'chunk 3'.")
        with self.store.locked():
            self._init()
            self._stage()
            walked = self._unsaved is None
            commit = self._commit(commit_message(message, trailers), env=author_env(author))
            self._stamp = index_stamp(self.root / ".git", commit)
            if walked:  # saved now; a snapshot of the feed's paths saves at close()
                self._save_record()
            else:
                self._unsaved = True
            return commit

    def _save_record(self) -> None:
        """Save what the last snapshot saw of each file, stamped with the index it left."""
        self._unsaved = False
        if self._walk is not None and self._stamp is not None:
            save_record(self.root / STATE_DIR, self._walk.keys, self._stamp)

    def _commit(self, message: str, env: Mapping[str, str] | None = None) -> str:
        """Commit the index on top of HEAD and return the commit's id.

        Through git's plumbing (``write-tree``, ``commit-tree``, ``update-ref``):
        ``git commit`` would stat every file of the tree to refresh the index first,
        which a snapshot that staged only its changes has no need of. The message is
        cleaned as ``git commit -m`` cleans it (trailing spaces, blank lines).
        """
        tree = self._git("write-tree", env=env).decode().strip()
        parent = self._git("rev-parse", "--verify", "-q", "HEAD", check=False,
                           env=env).decode().strip()
        made = self._git("commit-tree", tree, *(["-p", parent] if parent else []),
                         input=_clean_message(message).encode("utf-8"), env=env)
        commit = made.decode().strip()
        self._git("update-ref", "-m", f"snapshot: {message.splitlines()[0][:80]}", "HEAD",
                  commit, parent, env=env)
        return commit

    def close(self) -> None:
        """Stop following changes, and save the record for the next process.

        The record of snapshots that staged the feed's paths is saved here, not at
        each of them (it is a line per file), and only while git's index is still
        the one the last snapshot left.
        """
        if self._unsaved and not self._moved_index():
            self._save_record()
        if self._feed is not None:
            self._feed.close()
            self._feed = None

    def _stage(self) -> None:
        """Stage what changed since the last snapshot: the paths the feed names, or all."""
        if self._feed is None:
            # Started before the tree is looked at: a change made after this point is
            # named at the next snapshot, one made before is staged now. Lazy: a
            # process that takes one snapshot (the command line, inside one_call)
            # pays for no watches; any other starts them at its first.
            self._feed = ChangeFeed(self.root, hidden=True, lazy=True)
        changes = self._feed.poll()
        if changes.everything or self._moved_index():
            self._stage_all()
            return
        self._walk = None if self._walk is None else refresh(
            self._walk, self.root, STATE_DIR,
            [os.fsencode("/".join(parts)) for parts in changes.paths])
        self._stage_named(changes.paths)

    def _stage_all(self) -> None:
        """Stage the whole tree's changes: those the saved record says, else ``git add``.

        The record (:mod:`memdir.store._stat_record`) is used while git's index is
        the one the snapshot that saved it left; then only files whose size, times,
        inode or mode differ from it are hashed. Without one, ``git add --all``
        stages the tree (its stat check in whole seconds), and a new record is made.
        """
        self._walk = walk_tree(self.root, STATE_DIR)
        self._unsaved = None  # this snapshot saves its record when made
        head = self._head()
        record = None
        if self._walk is not None and head is not None:
            record = load_record(self.root / STATE_DIR, index_stamp(self.root / ".git", head))
        if record is None or self._walk is None:
            self._add_all()
            self.full_stages += 1
            return
        new, gone = changed_since(record, self._walk)
        self._stage_named(frozenset(tuple(os.fsdecode(p).split("/")) for p in [*new, *gone]))

    def _moved_index(self) -> bool:
        """Whether git's index changed since this object's last snapshot, by other means.

        The feed follows the files, not the index: a ``git add`` or a replica's sync
        in between makes the next snapshot stage the whole tree (and so repair it).
        """
        head = self._head()
        return self._stamp is None or head is None or \
            index_stamp(self.root / ".git", head) != self._stamp

    def _head(self) -> str | None:
        """HEAD's commit, from the ref's file when it is loose, else from git; None if unborn."""
        try:
            pointer = (self.root / ".git" / "HEAD").read_text(encoding="ascii").strip()
            if pointer.startswith("ref: refs/heads/"):
                text = (self.root / ".git" / pointer[5:]).read_text(encoding="ascii").strip()
                if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
                    return text
        except (OSError, UnicodeDecodeError):
            pass
        found = self._git("rev-parse", "--verify", "-q", "HEAD", check=False).decode().strip()
        return found or None

    def _stage_named(self, named: frozenset[tuple[str, ...]]) -> None:
        """Stage the paths ``named`` (files, links, folders with their trees, gone ones)."""
        files: list[tuple[str, int]] = []
        links: list[str] = []
        folders: list[str] = []
        gone: list[str] = []
        for parts in sorted(named):
            path = "/".join(parts)
            try:
                mode = os.lstat(self.root / path).st_mode
            except (FileNotFoundError, NotADirectoryError):
                mode = 0
            if _in_a_repository(parts) or not (mode and not stat.S_ISDIR(mode)):
                (folders if mode else gone).append(path)
            elif stat.S_ISREG(mode):
                files.append((path, mode))
            elif stat.S_ISLNK(mode):
                links.append(path)
            else:
                folders.append(path)  # a special file: git add decides, as for the whole tree
        # (folders: a folder made or moved in, its whole tree, or a path into a repository
        # inside the store: git add decides what it records; gone: removed, with its tree.)
        if gone:
            self._git("rm", "--cached", "-r", "-q", "--ignore-unmatch",
                      "--pathspec-from-file=-", "--pathspec-file-nul",
                      input=_pathspecs(gone))
        if folders:
            self._add_paths(folders)
        try:
            self._stage_files(files, links)
        except HistoryError:  # a file gone, or a folder on the way made a link, meanwhile
            self._add_paths([*(p for p, _ in files), *links])

    def _add_paths(self, paths: list[str]) -> None:
        """``git add --all`` of ``paths`` (and all below them), then memdir's own files out.

        The exclude pathspecs of a whole-tree add are not given here: with one of them,
        git 2.39 skips the files of a folder it has no entry under yet (a file that
        became a folder, ``.hidden/e.md``, had its files never recorded). memdir's
        state and temporary files are taken out of the index afterwards instead.
        """
        for start in range(0, len(paths), _ADD_CHUNK):
            chunk = paths[start : start + _ADD_CHUNK]
            self._git("add", "--all", "--force", "--", *(f":(literal,top){p}" for p in chunk))
        self._git("rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", *_STATE_SPECS)

    def _stage_files(self, files: list[tuple[str, int]], links: list[str]) -> None:
        """Stage named regular files (path, mode) and links, reading nothing else.

        Each file's bytes are hashed whatever its index entry says: the feed named
        it, and git's own check by size, times and inode misses an edit in place
        that kept the size and put the time back within the second of the entry's
        last change. A link cannot change in place, so git's check is enough for it.
        """
        if files:
            ids = self._git("hash-object", "-w", "--stdin-paths",
                            input=b"".join(_quoted(p) + b"\n" for p, _ in files)).split()
            if len(ids) != len(files):
                raise HistoryError(f"git hash-object gave {len(ids)} ids for {len(files)} files")
            # --replace lets a file take the place of a folder.
            self._git("update-index", "-z", "--replace", "--index-info", input=b"".join(
                b"%s %s\t%s\0" % (b"100755" if mode & stat.S_IXUSR else b"100644", blob,
                                   p.encode("utf-8", "surrogateescape"))
                for (p, mode), blob in zip(files, ids, strict=True)))
        if links:
            self._git("update-index", "--add", "--replace", "-z", "--stdin",
                      input=b"".join(p.encode("utf-8", "surrogateescape") + b"\0"
                                     for p in links))

    # -- reading ---------------------------------------------------------------

    def steps(self) -> list[Step]:
        """Every recorded step, oldest first."""
        self._require()
        if not self._git("rev-parse", "--verify", "-q", "HEAD", check=False).strip():
            return []
        fmt = _SEP.join(["%H", "%T", "%cI", "%B"]) + "\x1e"
        # A message another git client wrote may be in any encoding: shown, not kept.
        raw = self._git("log", "--reverse", "--first-parent", f"--format={fmt}").decode(
            "utf-8", "replace")
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
            mode, kind, blob = meta.decode().split()
            if kind == "blob" and mode in _FILE_MODES:
                found[f"{ROOT}/{_name(path)}"] = blob
        return found

    def read_blobs(self, blob_ids: Iterable[str]) -> dict[str, bytes]:
        """The contents of several blobs, fetched in one git process (see :meth:`each_blob`)."""
        return dict(self.each_blob(blob_ids))

    def each_blob(self, blob_ids: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """The contents of several blobs one at a time, sorted by id, from one git process.

        git's output is read as it comes, so only the blob being handed over is
        held (where :meth:`read_blobs` holds them all): a caller that parses each
        and lets it go needs memory for one file version, not for every version
        the history recorded. A caller that stops early stops git too.

        Raises:
            HistoryError: git is missing, cannot read a blob, or fails.
        """
        wanted = sorted(set(blob_ids))
        if not wanted:
            return
        with tempfile.TemporaryFile() as errors:
            try:
                git = subprocess.Popen(
                    ["git", *_CONFIG, "cat-file", "--batch"], cwd=self.root,
                    env=self._git_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=errors,
                )
            except FileNotFoundError:
                raise HistoryError(
                    "git is not installed; install git to keep a store's history."
                ) from None
            assert git.stdin is not None and git.stdout is not None
            # The ids go in from a thread of their own: git answers while it reads
            # them, and a pipe full both ways would stop both processes.
            feeder = threading.Thread(target=_feed_ids, args=(git.stdin, wanted),
                                      name="memdir-git-ids", daemon=True)
            feeder.start()
            given = 0
            try:
                for found in _batch_blobs(git.stdout, wanted):
                    yield found
                    given += 1
            finally:
                if given < len(wanted):
                    git.kill()  # the caller stopped early, or git's answer broke off
                git.stdout.close()
                feeder.join()
                code = git.wait()
            if code != 0:
                errors.seek(0)
                message = errors.read().decode("utf-8", "replace").strip()
                raise HistoryError(f"git cat-file failed in {self.root}: {message}")
            if given < len(wanted):
                raise HistoryError(f"git stopped before giving blob {wanted[given]}")

    def step_changes(self) -> Iterator[tuple[Step, dict[str, str | None]]]:
        """Each step with what it changed since the step before: path -> new blob, or None.

        The first step's changes are its whole state. One git process reads the
        whole history, so this costs in proportion to the changes recorded, not to
        steps times store size; replaying it rebuilds every step's file list.
        """
        for step, changed in self._step_entries():
            yield step, {path: None if entry is None else entry[0]
                         for path, entry in changed.items()}

    def _step_entries(self) -> Iterator[tuple[Step, dict[str, tuple[str, str] | None]]]:
        """:meth:`step_changes` with each new file's mode: path -> (blob, mode), or None."""
        steps = self.steps()
        if not steps:
            return
        raw = self._git(
            "log", "--first-parent", "--diff-merges=first-parent", "--reverse", "--root",
            "--raw", "--no-renames", "--no-abbrev", "-z", "--format=%x1e%H",
        )
        by_commit: dict[str, dict[str, tuple[str, str] | None]] = {}
        for record in raw.split(b"\x1e")[1:]:
            head, _, body = record.partition(b"\0")
            by_commit[head.decode().strip()] = _raw_changes(body)
        for step in steps:
            yield step, by_commit.get(step.commit, {})

    def read_state(self, ref: int | str | Step) -> dict[str, str]:
        """A past state as ``{path: text}``; the live store is not touched.

        A file whose bytes are not UTF-8 (a shell command can leave one) is given
        with each undecodable byte as U+FFFD; :meth:`blobs` and :meth:`read_blobs`
        give every file's exact bytes.
        """
        blobs = self.blobs(ref)
        contents = self.read_blobs(blobs.values())
        return {path: contents[blob].decode("utf-8", "replace")
                for path, blob in sorted(blobs.items())}

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
        # Through folder handles, one level at a time: a tree of any depth is rebuilt
        # without recursion and without host paths longer than the system allows.
        root_fd = open_root(target)
        try:
            for path, blob in blobs.items():
                parts = posix_parts(path)
                folder = open_dir(root_fd, parts[:-1], create=True)
                try:
                    fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600,
                                 dir_fd=folder)
                    with os.fdopen(fd, "wb") as out:
                        out.write(contents[blob])
                finally:
                    os.close(folder)
        finally:
            os.close(root_fd)

    def diff(self, a: int | str | Step, b: int | str | Step) -> StateDiff:
        """Compare two steps: paths added, removed and modified, and a unified diff."""
        first, second = self.step(a).commit, self.step(b).commit
        status = self._git("diff", "--no-ext-diff", "--no-textconv", "--no-renames",
                           "--name-status", "-z", first, second)
        parts = [_name(p) for p in status.split(b"\0") if p]
        added: list[str] = []
        removed: list[str] = []
        modified: list[str] = []
        for code, path in zip(parts[::2], parts[1::2], strict=True):
            virtual = f"{ROOT}/{path}"
            {"A": added, "D": removed}.get(code[0], modified).append(virtual)
        patch = self._git("diff", "--no-ext-diff", "--no-textconv", "--no-renames",
                          "--no-color", first, second)
        return StateDiff(added, removed, modified, patch.decode("utf-8", "replace"))

    def verify(self, progress: Callable[[int, int], None] | None = None) -> VerifyReport:
        """Replay every step, and check the newest one holds every file it should.

        Every step is rebuilt in one scratch folder, each from the one before by
        writing only what the step changed, and the folder must hash to the step's
        recorded tree. Then the live store is compared with the newest step: a file
        that differs from it (or is missing from it) although its inode last changed
        before that step was taken was left out of the snapshot, and is a mismatch.
        Files changed since then are simply not recorded yet.

        Cost: the changes recorded, plus git reading and writing its index of
        the scratch tree once per step (no stat of its files). Inside
        :func:`memdir.progress.reporting`, a status line tells the steps done and,
        during the first (which writes and hashes every file), how far it is.

        Args:
            progress: Called as ``progress(done, total)`` after each step.
        """
        steps = self.steps()
        mismatches: list[str] = []
        with reporter(len(steps), "step", first_is_setup=True) as shown:
            if steps:
                shown.note(f"comparing the live store with step {steps[-1].index}")
                mismatches += self._left_out(steps[-1])
            mismatches += self._replay(steps, shown, progress)
        return VerifyReport(len(steps), mismatches)

    def _replay(self, steps: list[Step], shown: Progress,
                progress: Callable[[int, int], None] | None) -> list[str]:
        """:meth:`verify`'s replay of every step in a scratch folder: its mismatches."""
        mismatches: list[str] = []
        scratch = Path(tempfile.mkdtemp(prefix="memdir-verify-"))
        scratch_fd = open_root(scratch)
        try:
            folder = scratch / "tree"
            folder.mkdir()
            files: dict[str, str] = {}
            for done, (step, changed) in enumerate(self._step_entries(), start=1):
                first = _prefixed(shown.note, "step 1: ") if done == 1 else None
                self._apply(folder, changed, files, first)
                if first is not None:
                    first(f"hashing {len(changed):,} files")
                tree = self._tree_of(folder, scratch / "index", changed)
                if tree != step.tree:
                    mismatches.append(
                        f"step {step.index} ({step.commit[:10]}): rebuilt tree {tree[:10]} "
                        f"differs from recorded tree {step.tree[:10]}"
                    )
                shown.step()
                if progress is not None:
                    progress(done, len(steps))
        finally:
            for entry in os.listdir(scratch_fd):
                remove_at(scratch_fd, entry)  # no recursion, whatever the depth
            os.close(scratch_fd)
            scratch.rmdir()
        return mismatches

    def _apply(self, folder: Path, changed: Mapping[str, tuple[str, str] | None],
               files: dict[str, str], note: Callable[[str], None] | None = None) -> None:
        """Bring a replayed tree from one step to the next: remove, then write what changed.

        Removals go first, deepest first, so a folder that became a file (or a file
        that became a folder) is out of the way before the new entry is written.
        ``note`` (a status line's) is told how far the writing is.
        """
        if note is not None:
            note(f"reading {len(changed):,} files")
        contents = self.read_blobs(e[0] for e in changed.values() if e is not None)
        root_fd = open_root(folder)
        try:
            for path in sorted((p for p, e in changed.items() if e is None), reverse=True):
                parts = posix_parts(path)
                try:
                    parent = open_dir(root_fd, parts[:-1])
                except (FileNotFoundError, NotADirectoryError):
                    files.pop(path, None)
                    continue  # its folder went already, with it
                try:
                    with contextlib.suppress(FileNotFoundError):
                        remove_at(parent, parts[-1])
                finally:
                    os.close(parent)
                files.pop(path, None)
            for written, (path, entry) in enumerate(changed.items(), start=1):
                if entry is None:
                    continue
                blob, mode = entry
                parts = posix_parts(path)
                parent = open_dir(root_fd, parts[:-1], create=True)
                try:
                    with contextlib.suppress(FileNotFoundError):
                        remove_at(parent, parts[-1])  # the old version, or a folder
                    fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600,
                                 dir_fd=parent)
                    with os.fdopen(fd, "wb") as out:
                        out.write(contents[blob])
                        os.fchmod(out.fileno(), 0o700 if mode == "100755" else 0o600)
                finally:
                    os.close(parent)
                files[path] = blob
                if note is not None:
                    note(f"wrote {written:,}/{len(changed):,} files")
        finally:
            os.close(root_fd)

    def _tree_of(self, folder: Path, index_file: Path,
                 changed: Iterable[str] | None = None) -> str:
        """The tree id of ``folder``, staged into the index ``index_file`` first.

        With ``changed`` the index lives across calls and only those paths are
        hashed again (``git update-index``: a removed one leaves the index, a
        written one is read from the folder), so a replayed step costs its
        changes, not a stat of every file; without it the whole tree is staged.
        """
        env = {
            "GIT_DIR": str(self.root / ".git"),
            "GIT_WORK_TREE": str(folder),
            "GIT_INDEX_FILE": str(index_file),
        }
        if changed is None:
            self._add_all(env=env, cwd=folder)
            return self._git("write-tree", env=env, cwd=folder).decode().strip()
        names = [path.removeprefix(ROOT + "/").encode("utf-8", "surrogateescape")
                 for path in changed]
        if names:
            # --replace: a path that was a file may now be a folder, or the reverse.
            self._git("update-index", "--add", "--remove", "--replace", "-z", "--stdin",
                      input=b"\0".join(names) + b"\0", env=env, cwd=folder)
        return self._git("write-tree", env=env, cwd=folder).decode().strip()

    def _left_out(self, newest: Step) -> list[str]:
        """Live files that predate ``newest`` but are not in it as they are."""
        taken = int(self._git("show", "-s", "--format=%ct", newest.commit).decode().strip())
        recorded = self.blobs(newest)
        files, _folders = self.store.capture()
        problems: list[str] = []
        for path, data in sorted(files.items()):
            if recorded.get(path) == _blob_id(data):
                continue
            changed = self._changed_at(posix_parts(path))
            if changed is None:
                continue  # removed since it was read: a change after the snapshot
            # ctime cannot be set back from user space; a second of margin covers
            # the commit time's rounding down to whole seconds.
            if changed < taken - 1:
                state = "differs in" if path in recorded else "is missing from"
                problems.append(
                    f"{path} {state} step {newest.index} ({newest.commit[:10]}) although "
                    "it was last changed before that snapshot: the snapshot left it out"
                )
        return problems

    def _changed_at(self, parts: tuple[str, ...]) -> float | None:
        """The inode change time of a store file, or None once it is gone."""
        root_fd = open_root(self.root)
        try:
            folder = open_dir(root_fd, parts[:-1])
            try:
                return os.stat(parts[-1], dir_fd=folder, follow_symlinks=False).st_ctime
            finally:
                os.close(folder)
        except FileNotFoundError:
            return None
        finally:
            os.close(root_fd)


def _prefixed(note: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    return lambda text: note(prefix + text)


def commit_message(message: str, trailers: Iterable[tuple[str, str]] = ()) -> str:
    """A commit message with ``(key, value)`` git trailers after a blank line."""
    lines = [f"{key}: {' '.join(value.split())}" for key, value in trailers]
    return message.rstrip("\n") + ("\n\n" + "\n".join(lines) if lines else "")


def author_env(author: str | None) -> dict[str, str] | None:
    """The environment naming ``author`` as a commit's author (None: memdir's own name)."""
    return {"GIT_AUTHOR_NAME": " ".join(author.split())} if author and author.strip() else None


def _clean_message(message: str) -> str:
    """``message`` as ``git commit -m`` stores it (``git stripspace``).

    No trailing spaces on any line, no leading or trailing blank lines, runs of
    blank lines made one, and a final newline.
    """
    lines = [line.rstrip() for line in message.split("\n")]
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    return "\n".join(kept) + "\n"


def _quoted(path: str) -> bytes:
    """``path`` C-quoted, as git reads a name from a line (any byte, newlines too)."""
    out = bytearray(b'"')
    for byte in path.encode("utf-8", "surrogateescape"):
        if 0x20 <= byte < 0x7F and byte not in (0x22, 0x5C):
            out.append(byte)
        else:
            out += b"\\%03o" % byte
    return bytes(out + b'"')


def _in_a_repository(parts: tuple[str, ...]) -> bool:
    """Whether a path goes through a ``.git`` (a repository inside the store), any case.

    git add decides what such a path records (an embedded repository); update-index
    would refuse it.
    """
    return any(p.lower() == ".git" for p in parts)


def _name(raw: bytes) -> str:
    """A path git gives as bytes, as the store names it: undecodable bytes kept.

    A shell command can make a file whose name is not UTF-8; such bytes become
    lone surrogates (``surrogateescape``), as :func:`os.fsdecode` makes them, so
    the name opens the same file again and goes back to git unchanged.
    """
    return raw.decode("utf-8", "surrogateescape")


def _pathspecs(paths: Iterable[str], extra: Iterable[str] = ()) -> bytes:
    """Paths as literal pathspecs from the top (then ``extra``), NUL-separated for git."""
    return b"\0".join([*(f":(literal,top){p}".encode("utf-8", "surrogateescape") for p in paths),
                       *(e.encode() for e in extra)])


def _raw_changes(body: bytes) -> dict[str, tuple[str, str] | None]:
    """A commit's ``--raw -z`` entries as path -> (new blob, mode); None: removed, or not a file."""
    fields = body.lstrip(b"\n").split(b"\0")
    found: dict[str, tuple[str, str] | None] = {}
    for meta, name in zip(fields[::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        _old_mode, new_mode, _old, new, _status = meta[1:].decode().split(" ")
        path = f"{ROOT}/{_name(name)}"
        found[path] = (new, new_mode) if new_mode in _FILE_MODES else None
    return found


def _feed_ids(pipe: IO[bytes], ids: list[str]) -> None:
    """Write the ids to ``git cat-file --batch``, one a line, then close its input."""
    try:
        for start in range(0, len(ids), 4096):
            pipe.write(("\n".join(ids[start : start + 4096]) + "\n").encode())
        pipe.close()
    except (BrokenPipeError, ValueError):
        pass  # git stopped first (killed, or failed): its status says why


def _batch_blobs(out: IO[bytes], wanted: list[str]) -> Iterator[tuple[str, bytes]]:
    """Each (id, contents) of ``git cat-file --batch``'s answers to ``wanted``, in order.

    Ends early, without raising, where git's output ends early (git failed: its
    exit status and message say why).
    """
    for blob in wanted:
        line = out.readline()
        if not line:
            return
        header = line.decode("utf-8", "replace").split()
        if len(header) < 3:
            raise HistoryError(f"git could not read blob {blob}: {' '.join(header)}")
        size = int(header[2])
        data = out.read(size)
        if len(data) != size or out.read(1) != b"\n":
            return
        yield blob, data


def _blob_id(data: bytes) -> str:
    """The object id git gives a blob holding ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _ensure_lines(path: Path, wanted: Iterable[str]) -> None:
    """Append to ``path`` each of ``wanted`` it lacks, keeping what it holds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    missing = [line for line in wanted if line not in lines]
    if missing:
        path.write_text("\n".join([*lines, *missing]) + "\n", encoding="utf-8")
