"""``memdir clone``: make a working replica of a store kept in a git remote."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memdir.cli._common import fail, print_json
from memdir.cli.sync import report_dict

__all__ = ["clone", "register"]


def clone(
    url: Annotated[str, typer.Argument(metavar="URL", help="The remote: a path, file://, "
                                       "git://, ssh://, user@host:path or https:// address.")],
    dest: Annotated[Path, typer.Argument(metavar="DIR", help="A new or empty folder for the "
                                         "replica.")],
    name: Annotated[str | None, typer.Option(
        "--name", help="This replica's name in commits (default: HOST-FOLDER).")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=1, help="Seconds the transfer may take.")] = 120.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the first sync's report "
                                          "as JSON.")] = False,
) -> None:
    """Make DIR a replica of the store at URL: a full clone that `memdir sync` keeps in step.

    The replica is a store like any other (every command and tool set works on
    it) whose history has URL as its remote. git does the transfer, with your
    credentials, SSH keys and URL settings, as `git clone` would. An empty
    remote gives an empty replica; its first sync fills the remote.

    Exit status: 0 cloned, 2 DIR not empty or the remote unreachable.

    For example:

        memdir clone ssh://git@example.org/team/memory.git ./memories

        memdir clone /srv/memory.git ./second --name server
    """
    from memdir.store import StoreError
    from memdir.store.replica import Replica

    try:
        replica, report = Replica.clone(url, dest, name=name, timeout=timeout)
    except StoreError as exc:
        fail(str(exc), "check the address, or clone into a new folder.")
    if as_json:
        print_json(report_dict(report))
        return
    files = len(replica.store.files())
    typer.echo(f"cloned {url} into {replica.root} as replica {replica.name}: {files} file(s), "
               f"{report.received} commit(s).")


def register(app: typer.Typer) -> None:
    """Add ``clone`` to the command line."""
    app.command("clone")(clone)
