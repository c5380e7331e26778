"""``memdir history STORE ...``: snapshots of a store, their log, contents and differences."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from memdir.cli._common import StoreArg, fail, json_errors, runnable
from memdir.progress import reporting
from memdir.store import Store, StoreError
from memdir.store._feed import one_call
from memdir.store.history import History

__all__ = ["register"]

EXIT_USAGE = 2

history_app = typer.Typer(
    help="Keep and inspect a store's history (git snapshots at the store root). "
    "Usage: memdir history STORE COMMAND. Exit status: 0 success, 1 a check failed "
    "(verify), 2 bad input.",
    no_args_is_help=True,
)


_BACK = re.compile(r"-\d+")
_MEMDIR_AUTHOR = "memdir"  # the author of memdir's own commits (store/history.py)


class _StepCommand(TyperCommand):
    """A command whose positional steps may count back (``show -1``, ``diff 0 -2``).

    click reads any word starting with ``-`` as an option; here a negative
    number is a step, and any other unknown option is still refused.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        known = {name for param in self.get_params(ctx)
                 for name in (*param.opts, *param.secondary_opts)}
        for arg in args:
            if arg == "--":
                break
            if arg.startswith("-") and not _BACK.fullmatch(arg) \
                    and arg.split("=", 1)[0] not in known:
                ctx.fail(f"No such option: {arg}")
        return super().parse_args(ctx, args)

    def make_parser(self, ctx: Any) -> Any:
        parser = super().make_parser(ctx)
        parser.ignore_unknown_options = True  # only negative steps get past parse_args
        return parser


def _history(ctx: typer.Context) -> History:
    """The history of the store named before the subcommand, opened on first use.

    Opened here rather than in the group's callback, so that ``memdir history
    STORE SUB --help`` works whether or not STORE exists.
    """
    if not isinstance(ctx.obj, History):
        assert isinstance(ctx.obj, Path)
        try:
            ctx.obj = History(Store(ctx.obj))
        except StoreError as exc:
            raise _guard(str(exc), ctx) from None
        # The command takes one snapshot at most and exits: its change feed watches nothing.
        ctx.with_resource(one_call())
    return ctx.obj


ShowProgress = Annotated[bool, typer.Option(
    "--progress/--no-progress", help="Status lines on stderr: steps done of all, time elapsed, "
    "an estimate of the time left, and how far the first step (which reads every file) is. "
    "Redrawn in place in a terminal; elsewhere (a file, a pipe, CI) plain lines, one at the "
    "start, then at most one every --progress-every seconds, and one at the end. Standard "
    "output gets only the result.")]
ProgressEvery = Annotated[float, typer.Option(
    "--progress-every", min=0.0, metavar="SECONDS",
    help="Off a terminal, the least seconds between two status lines (0: one per step).")]
PROGRESS_EVERY = 10.0
"""Seconds between status lines off a terminal: a ten-minute table logs about sixty."""


def _guard(action: str, ctx: typer.Context) -> typer.Exit:
    # One error line; a command quoted in it names this store and runs in this shell.
    store = ctx.obj.root if isinstance(ctx.obj, History) else ctx.obj
    fail(action.replace("memdir history STORE ", f"memdir history {store} "))


@history_app.callback()
def main(
    ctx: typer.Context,
    store_path: StoreArg,
) -> None:
    """Open the store whose history the command works on."""
    ctx.obj = store_path


@history_app.command("init")
def init(ctx: typer.Context) -> None:
    """Start a history (a git repository at the store root); harmless if one exists."""
    _history(ctx).init()
    typer.echo(f"history ready in {_history(ctx).root / '.git'}")


@history_app.command("snapshot")
def snapshot(
    ctx: typer.Context,
    message: Annotated[str, typer.Option("--message", help="Names the unit.")],
) -> None:
    """Record the store's current state as a new step (even when nothing changed)."""
    try:
        commit = _history(ctx).snapshot(message)
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    typer.echo(commit)


@history_app.command("remote")
def remote(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(metavar="URL", help="A path or URL git can reach.")],
    create: Annotated[bool, typer.Option(
        "--create", help="URL is a local path with no repository yet: make an empty bare "
        "repository there for replicas to meet in.")] = False,
    name: Annotated[str | None, typer.Option(
        "--name", help="This replica's name in commits (default: HOST-FOLDER).")] = None,
) -> None:
    """Attach a git remote, making the store a replica that `memdir sync` keeps in step."""
    from memdir.store.replica import Replica

    try:
        replica = Replica(_history(ctx).store, name=name)
        replica.attach(url, create=create)
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    typer.echo(f"{replica.root} is replica {replica.name} of {replica.url}; "
               "run `memdir sync` to exchange changes.")


@history_app.command("log")
@json_errors
def log(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    every: Annotated[bool, typer.Option(
        "--all", help="Every commit of every replica (the whole graph, newest first), with "
        "who wrote it and on which replica, instead of this store's own steps.")] = False,
) -> None:
    """List every step, oldest first: number, commit, time, message, and who wrote it where."""
    if every:
        _log_all(ctx, as_json)
        return
    try:
        steps = _history(ctx).steps()
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    if as_json:
        typer.echo(json.dumps([asdict(s) for s in steps], indent=2))
        return
    if not steps:
        typer.echo(f"no snapshots yet in {_history(ctx).root}.", err=True)
        typer.echo(runnable("hint: record one with `memdir history STORE snapshot --message "
                            "'...'`.").replace("STORE", str(_history(ctx).root)), err=True)
        return
    for s in steps:
        title = s.message.split("\n", 1)[0]
        typer.echo(f"{s.index:>4}  {s.commit[:10]}  {s.time}  {title}{_where(s.message)}")


def _where(message: str) -> str:
    """`` (by WRITER on REPLICA)`` from a commit's memdir trailers, or "" without them."""
    replica = [ln[16:].strip() for ln in message.splitlines() if ln.startswith("Memdir-Replica:")]
    writers = [ln[15:].strip() for ln in message.splitlines() if ln.startswith("Memdir-Writer:")]
    by = f"by {', '.join(writers)}" if writers else ""
    on = f"on {replica[-1]}" if replica else ""
    return f"  ({' '.join(p for p in (by, on) if p)})" if by or on else ""


def _log_all(ctx: typer.Context, as_json: bool) -> None:
    from memdir.store.replica import commits

    try:
        found = commits(_history(ctx))
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    if as_json:
        typer.echo(json.dumps([asdict(c) for c in found], indent=2))
        return
    for c in found:
        # memdir's own name says nothing a reader can use: the plain log leaves it out too.
        writers = c.writers or ((c.author,) if c.author != _MEMDIR_AUTHOR else ())
        by = f"by {', '.join(writers)}" if writers else ""
        on = f"on {c.replica}" if c.replica else ""
        where = f"  ({' '.join(p for p in (by, on) if p)})" if by or on else ""
        typer.echo(f"{c.commit[:10]}  {c.time}  {c.title}{where}")


@history_app.command("show", cls=_StepCommand)
def show(
    ctx: typer.Context,
    step: Annotated[str, typer.Argument(help="Step number (negative counts back) or commit id.")],
    path: Annotated[str | None, typer.Option(help="Print this file as it was at the step.")] = None,
) -> None:
    """Show a past state: its files and sizes, or one file's text."""
    history = _history(ctx)
    try:
        blobs = history.blobs(step)
        contents = history.read_blobs(blobs.values())
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    if path is not None:
        wanted = path if path.startswith("/memories") else f"/memories/{path.lstrip('/')}"
        if wanted not in blobs:
            raise _guard(f"{wanted} does not exist at step {step}; run show without --path.", ctx)
        typer.echo(contents[blobs[wanted]].decode("utf-8", "replace"), nl=False)
        return
    for name, blob in sorted(blobs.items()):
        typer.echo(f"{len(contents[blob]):>8}  {name}")  # bytes, whatever their encoding


@history_app.command("diff", cls=_StepCommand)
@json_errors
def diff(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(help="The earlier step.")],
    b: Annotated[str, typer.Argument(help="The later step.")] = "-1",
    stat: Annotated[bool, typer.Option("--stat", help="Only list changed paths.")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print one JSON object: added, removed and modified paths, and the "
        "text diff (unless --stat).")] = False,
) -> None:
    """Compare two steps: added, removed and modified files, then the text diff."""
    try:
        change = _history(ctx).diff(a, b)
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    if as_json:
        data: dict[str, object] = {"from": a, "to": b, "added": list(change.added),
                                   "removed": list(change.removed),
                                   "modified": list(change.modified)}
        if not stat:
            data["patch"] = change.patch
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for mark, paths in (("A", change.added), ("D", change.removed), ("M", change.modified)):
        for p in paths:
            typer.echo(f"{mark}  {p}")
    if not stat and change.patch:
        typer.echo(change.patch, nl=False)


@history_app.command("checkout", cls=_StepCommand)
def checkout(
    ctx: typer.Context,
    step: Annotated[str, typer.Argument(help="The step to rebuild.")],
    dest: Annotated[Path, typer.Argument(help="A new or empty folder.")],
) -> None:
    """Rebuild a past state in another folder; the live store is left alone."""
    try:
        _history(ctx).checkout_to(step, dest)
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    typer.echo(f"step {step} rebuilt in {dest}")


@history_app.command("verify")
def verify(
    ctx: typer.Context,
    show_progress: ShowProgress = True,
    every: ProgressEvery = PROGRESS_EVERY,
) -> None:
    """Rebuild every step in a scratch folder and check it against its snapshot."""
    try:
        with reporting(enabled=show_progress, every=every, title="history verify"):
            report = _history(ctx).verify()
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    for line in report.mismatches:
        typer.echo(f"! {line}")
    typer.echo(f"{report.checked} steps checked, {len(report.mismatches)} mismatches")
    raise typer.Exit(0 if report.ok else 1)


@history_app.command("table")
def table(
    ctx: typer.Context,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of markdown.")] = False,
    plots: Annotated[Path | None, typer.Option(help="Write growth/adherence PNGs here.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the B3 unit and B4 pair samples.")] = 0,
    b3_sample: Annotated[int | None, typer.Option(
        "--b3-sample", min=1, metavar="UNITS",
        help="Compare this many units in B3 at each step (every unit when a step has no "
        "more), picked by a seeded hash of their keys so the same units stay in from step "
        "to step. Default: every unit up to 20 million unit-centroid cosines, else a sample "
        "of at least 1,000. B3's cost per step grows with this number; its standard error "
        "(column b3_se) shrinks with its square root.")] = None,
    show_progress: ShowProgress = True,
    every: ProgressEvery = PROGRESS_EVERY,
) -> None:
    """Measure every step: the growth table (files, bytes, depth, B1-B4 per step)."""
    from memdir.metrics import Measurer, measure_history, plot_trajectory

    try:
        with reporting(enabled=show_progress, every=every, title="history table"):
            trajectory = measure_history(_history(ctx),
                                         measurer=Measurer(seed=seed, b3_sample=b3_sample))
    except StoreError as exc:
        raise _guard(str(exc), ctx) from None
    typer.echo(trajectory.to_csv() if as_csv else trajectory.to_markdown())
    if plots is not None and trajectory.rows:
        for png in plot_trajectory(trajectory, plots):
            typer.echo(f"wrote {png}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``memdir history`` to the command line."""
    app.add_typer(history_app, name="history")
