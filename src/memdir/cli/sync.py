"""``memdir sync``: exchange a replica's changes with its git remote."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer

from memdir.cli._common import ExitCode, StoreArg, fail, json_errors, open_store, print_json

if TYPE_CHECKING:
    from memdir.store.replica import SyncReport

__all__ = ["register", "report_dict", "sync"]


def report_dict(report: SyncReport) -> dict[str, object]:
    """A sync report as JSON-ready data, its one-line summary included."""
    return {**asdict(report), "ok": report.ok, "summary": report.summary()}


@json_errors
def sync(
    store_path: StoreArg,
    writer: Annotated[list[str] | None, typer.Option(
        "--writer", help="Who made the changes being recorded (an agent, a person); named "
        "in the commit. Repeat for several.")] = None,
    message: Annotated[str | None, typer.Option(
        "--message", help="The message of the snapshot of local changes.")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=1, help="Seconds a fetch or push may take before the remote counts "
        "as unreachable.")] = 120.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Record local changes, then fetch, merge and push them with the store's remote.

    Local changes become one snapshot; the remote's changes are merged in with
    memdir's merge (files and parts of files changed on one side only merge
    silently; lines changed on both sides are kept as a conflict block that
    view, tree, health and browse point out); the result is pushed, and a push
    that lost a race with another replica is retried. When the remote cannot be
    reached the store keeps working and keeps its changes; the next sync sends
    them.

    Exit status: 0 synced, 1 the remote was unreachable (changes kept locally),
    2 no remote or another error.

    For example:

        memdir sync ./memories

        memdir sync ./memories --writer alice --json
    """
    from memdir.store import StoreError
    from memdir.store.replica import Replica

    store = open_store(store_path)
    try:
        report = Replica(store, timeout=timeout).sync(writers=writer or (), message=message)
    except StoreError as exc:
        fail(str(exc))
    if as_json:
        print_json(report_dict(report))
    else:
        typer.echo(report.summary(), err=not report.ok)
    raise typer.Exit(int(ExitCode.OK if report.ok else ExitCode.FINDINGS))


def register(app: typer.Typer) -> None:
    """Add ``sync`` to the command line."""
    app.command("sync")(sync)
