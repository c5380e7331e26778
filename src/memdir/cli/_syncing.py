"""Keeping a served or ingested store in step with its remote (``--sync``), for the commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memdir.cli._common import fail

if TYPE_CHECKING:
    from memdir.store import Store, StoreError
    from memdir.store.replica import SyncReport
    from memdir.store.syncer import Syncer

__all__ = ["start_syncer"]


def start_syncer(store: Store, *, interval: float, writer: str | None,
                 delay: float = 2.0, stop_at_exit: bool = False, wait: bool = True) -> Syncer:
    """Sync ``store`` now and then in the background; one line on stderr per notable sync.

    A line is printed for the first sync, for each sync that moved anything or kept a
    conflict, when the remote goes away and when it comes back, and for each error.
    Exits with a message when the store has no remote.

    Args:
        store: The store (a replica: its history has a remote).
        interval: Seconds between syncs when nothing is written.
        writer: Who writes, named in the commits.
        delay: Quiet seconds after a write before its sync.
        stop_at_exit: Stop the syncer, with a last sync of waiting writes, when the
            process exits (for a server, whatever way it stops).
        wait: Run the first sync before returning; else the syncer's thread runs it.
    """
    from memdir.cli._common import err_console
    from memdir.store import StoreError
    from memdir.store.replica import Replica
    from memdir.store.syncer import Syncer

    replica = Replica(store)
    if replica.url is None:
        fail(f"--sync needs a remote, and the store at {store.root} has none.",
             "attach one with `memdir history STORE remote URL`, or clone the store with "
             "`memdir clone URL DIR`.")
    state = {"offline": False, "first": True}

    def show(outcome: SyncReport | StoreError) -> None:
        if isinstance(outcome, StoreError):
            err_console.print(f"[red]sync failed:[/] {outcome}", markup=True, highlight=False)
            return
        offline = outcome.offline is not None
        moved = outcome.sent or outcome.received or outcome.conflicts
        if state["first"] or moved or offline != state["offline"]:
            err_console.print(outcome.summary(), markup=False, highlight=False)
        state["first"], state["offline"] = False, offline

    syncer = Syncer(replica, interval=interval, delay=delay, max_delay=max(delay, 10.0),
                    writer=writer, on_report=show)
    syncer.start(wait=wait)
    if stop_at_exit:
        _stop_at_exit(syncer.stop)
    return syncer


def _stop_at_exit(stop: Callable[[], object]) -> None:
    """Run ``stop`` (a syncer's, with its last sync) as the process exits, SIGTERM included.

    SIGTERM's default kills the process before any exit handler runs (uvicorn
    raises it again once it has stopped serving), so it is turned into a normal
    exit, status 0, as the server's own stop is.
    """
    import atexit
    import signal

    atexit.register(stop)
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):

        def leave(signum: int, frame: object) -> None:
            raise SystemExit(0)

        signal.signal(signal.SIGTERM, leave)
