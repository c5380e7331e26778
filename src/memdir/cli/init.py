"""``memdir init``: create a store (optionally filled with the sample store)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from memdir.cli._common import console, fail, is_store, runnable
from memdir.sample import build_sample_store
from memdir.store import Store

__all__ = ["init", "register"]


def init(
    path: Annotated[Path, typer.Argument(help="Folder for the new store; created if missing.")],
    sample: Annotated[
        bool,
        typer.Option("--sample", help="Fill the new store with the sample store built from the "
                     "shipped example conversation."),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Turn a folder that already holds other files into a "
                     "store (nothing is deleted; run `memdir lint` afterwards)."),
    ] = False,
) -> None:
    """Create an empty memory store at PATH.

    A store is a folder of markdown files that agents see as /memories. init
    creates the folder and its state folder (.memdir). Running it on an
    existing store changes nothing. A folder that already holds files but is
    not a store is refused unless --force is given, so that a typo never
    turns your home directory into a store.

    Exit status: 0 created or already a store, 2 refused.

    For example:

        memdir init ./memories

        memdir init ./demo-store --sample
    """
    if path.exists() and not path.is_dir():
        fail(f"{path} is a file.", "choose a folder path for the store.")
    try:
        _create(path, sample, force)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = exc.filename or path
        fail(f"cannot create a store at {path}: {reason} ({where}).",
             "choose a folder you can write to, e.g. `memdir init ./memories`.")


def _create(path: Path, sample: bool, force: bool) -> None:
    existing = path.is_dir() and any(not p.name.startswith(".") for p in path.iterdir())
    already = path.is_dir() and is_store(path)
    if existing and not already and not force:
        fail(f"{path} already holds files and is not a memdir store.",
             "choose an empty or new folder, or pass --force to adopt this one.")
    if sample:
        if existing:
            fail(f"--sample needs an empty folder and {path} is not empty.",
                 "choose a new folder for the sample store.")
        store = build_sample_store(path)
        console.print(f"Created the sample store at [bold]{escape(str(store.root))}[/] "
                      f"({len(store.files())} files).")
        console.print(runnable(f"Next: [bold]memdir tree {escape(shlex.quote(str(path)))}[/]"))
        return
    store = Store(path, create=True)
    if already:
        console.print(f"{escape(str(store.root))} is already a store; nothing changed.")
        return
    console.print(f"Created a store at [bold]{escape(str(store.root))}[/].")
    if existing:
        console.print(runnable("It already holds files; check them with "
                               f"[bold]memdir lint {escape(shlex.quote(str(path)))}[/]."))


def register(app: typer.Typer) -> None:
    """Add ``init`` to the command line."""
    app.command("init")(init)
