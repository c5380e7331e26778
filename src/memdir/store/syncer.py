"""Syncing where agents work: at start, shortly after writes (batched), and on an interval.

A :class:`Syncer` runs :meth:`Replica.sync <memdir.store.replica.Replica.sync>` on a
background thread. It learns of writes from the store itself (every write made
through a :class:`~memdir.store.Store` of this process bumps its
:attr:`~memdir.store.Store.generation`) and from :meth:`Syncer.changed`, which
callers use to say who wrote (an agent, a token). Writes are batched: a sync
starts once the store has been quiet for ``delay`` seconds, or ``max_delay``
seconds after the first unsynced write, whichever comes first; with no writes a
sync still runs every ``interval`` seconds to bring in other replicas' changes.
A remote that cannot be reached is retried at the next of those times; the store
keeps working meanwhile.

For example, a script that writes through the Python API::

    with Syncer(Replica(store), writer="nightly-import") as syncer:
        store.create(...)          # synced a couple of seconds later
    # leaving the block runs a last sync
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

from memdir.store._errors import StoreError
from memdir.store.replica import Replica, SyncReport

__all__ = ["Syncer"]

_POLL_SECONDS = 0.25


class Syncer:
    """Keeps one replica in step with its remote from a background thread.

    Args:
        replica: The replica to sync (it must have a remote).
        interval: Seconds between syncs when nothing is written.
        delay: Quiet seconds after a write before its sync starts.
        max_delay: Most seconds a write waits for its sync while writes keep coming.
        writer: Who writes through this process, named in the commits.
        on_report: Called (on the syncing thread) with each sync's report, or with a
            :class:`StoreError` when a sync failed for another reason than the network.
    """

    def __init__(
        self,
        replica: Replica,
        *,
        interval: float = 60.0,
        delay: float = 2.0,
        max_delay: float = 10.0,
        writer: str | None = None,
        on_report: Callable[[SyncReport | StoreError], None] | None = None,
    ) -> None:
        if interval <= 0 or delay < 0 or max_delay < delay:
            raise ValueError("give interval > 0 and 0 <= delay <= max_delay seconds")
        self.replica = replica
        self.interval = interval
        self.delay = delay
        self.max_delay = max_delay
        self.writer = writer
        self.on_report = on_report
        self.last: SyncReport | None = None
        self.syncs = 0
        self._wake = threading.Condition()
        self._sync_lock = threading.Lock()
        self._writers: set[str] = set()
        self._first_change: float | None = None
        self._last_change = 0.0
        self._seen = self._observed = replica.store.generation
        self._stopping = False
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Syncer:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self, *, wait: bool = True) -> SyncReport | StoreError | None:
        """Sync once (so work starts from the remote's state), then keep syncing.

        Args:
            wait: Run that first sync now and return its outcome; else the syncing
                thread runs it first, and this returns None at once (a server that
                opens a store on a request does not hold the request for the network).
        """
        first = self.sync_now() if wait else None
        self._thread = threading.Thread(target=self._run, args=(not wait,),
                                        name="memdir-sync", daemon=True)
        self._thread.start()
        return first

    def changed(self, writer: str | None = None) -> None:
        """Note a write (by ``writer``, if given) that the next sync should carry."""
        with self._wake:
            now = time.monotonic()
            if writer:
                self._writers.add(writer)
            if self._first_change is None:
                self._first_change = now
            self._last_change = now
            self._wake.notify()

    @property
    def pending(self) -> bool:
        """Whether writes are waiting for a sync."""
        with self._wake:
            return self._first_change is not None or self.replica.store.generation != self._seen

    def sync_now(self) -> SyncReport | StoreError:
        """Run one sync at once (waiting for one in progress); its report or its error."""
        with self._sync_lock:
            with self._wake:
                writers = sorted(self._writers | ({self.writer} if self.writer else set()))
                self._writers.clear()
                self._first_change = None
                self._seen = self.replica.store.generation
            outcome: SyncReport | StoreError
            try:
                report = self.replica.sync(writers=writers)
            except StoreError as exc:
                outcome = exc
                with self._wake:  # keep the writers for the next attempt
                    self._writers.update(writers)
            else:
                outcome = self.last = report
            self.syncs += 1
            # The sync's own writes bumped the generation: they need no sync.
            with self._wake:
                self._seen = self._observed = self.replica.store.generation
        if self.on_report is not None:
            self.on_report(outcome)
        return outcome

    def stop(self, *, final: bool = True) -> SyncReport | StoreError | None:
        """Stop the thread; with ``final``, run a last sync if writes are waiting."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=self.replica.timeout * 3 + 10)
            self._thread = None
        with self._sync_lock:
            pass  # a sync another thread runs now (a stop there) finishes first
        if final and self.pending:
            return self.sync_now()
        return None

    def _due(self, now: float, last_sync: float) -> float:
        """Seconds until the next sync should start (0: now)."""
        when = last_sync + self.interval
        generation = self.replica.store.generation
        if generation != self._observed:  # a write made through the store
            self._observed = generation
            if generation != self._seen:
                self._last_change = now
                if self._first_change is None:
                    self._first_change = now
        if self._first_change is not None:
            when = min(when, self._last_change + self.delay, self._first_change + self.max_delay)
        return max(0.0, when - now)

    def _run(self, first: bool = False) -> None:
        if first:
            self.sync_now()
        last_sync = time.monotonic()
        while True:
            with self._wake:
                if self._stopping:
                    return
                wait = self._due(time.monotonic(), last_sync)
                if wait > 0:
                    self._wake.wait(timeout=min(wait, _POLL_SECONDS))
                    continue
            self.sync_now()
            last_sync = time.monotonic()
