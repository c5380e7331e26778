"""``memdir health``: measure a store, read the numbers aloud, raise the alarms."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from memdir.cli._common import StoreArg, fail, json_errors
from memdir.store import Store, StoreError
from memdir.store.history import History

if TYPE_CHECKING:  # the metrics pull in numpy and scipy: loaded only when this command runs
    from memdir.metrics import HealthReport, Measurer, Trajectory

__all__ = ["register"]

EXIT_HEALTHY = 0
EXIT_ALARMS = 1


def _fail(message: str) -> typer.Exit:
    fail(message)  # one error line (a JSON object with --json), exit 2


def _reference(store: Store, against: str | None, locators: Path | None) -> set[str] | None:
    from memdir.metrics import extract_locators, reference_locators

    if against is None and locators is None:
        return None
    found: set[str] = set()
    if against is not None:
        for text in History(store).read_state(against).values():
            found |= extract_locators(text)
    if locators is not None:
        try:
            found |= reference_locators(locators.read_text(encoding="utf-8"))
        except OSError as exc:
            raise _fail(f"cannot read the locator file {locators}: {exc.strerror}") from None
    return found


@contextmanager
def _report_kept() -> Iterator[None]:
    """Run the measurement with the cycle collector off, and keep what it made out of it after.

    The report holds the store's tree and summaries (millions of objects at
    100,000 files) until the command exits. The collector is off while they are
    made (as :func:`memdir.metrics.health_report` keeps it), and they are then
    frozen (:func:`gc.freeze`): no later collection walks them, neither those the
    JSON output would set off nor the one at exit. The collector is back on after.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if paused:
            gc.enable()


def _trajectory(store: Store, measurer: Measurer) -> Trajectory:
    from rich.progress import Progress

    from memdir.metrics import measure_history

    history = History(store)
    with Progress(transient=True) as progress:
        task = progress.add_task("measuring snapshots", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        return measure_history(history, measurer=measurer, progress=advance)


def _print_text(report: HealthReport, trajectory: Trajectory | None, max_alarms: int) -> None:
    shape, tax = report.metrics.shape, report.metrics.taxonomy
    typer.echo("Panel A - shape")
    for key, value in shape.to_dict().items():
        if key != "dangling":
            typer.echo(f"  {key:<16} {_num(value)}")
    typer.echo("Panel B - taxonomy adherence")
    for key in ("units_considered", "b1_distinguishability", "b1_min", "b1_nodes",
                "b2_cohesion", "b3_leakage", "b4_spearman", "b4_pairs"):
        typer.echo(f"  {key:<22} {_num(getattr(tax, key))}")
    typer.echo("Reading")
    for line in report.reading:
        typer.echo(f"  {line}")
    if tax.leaks:
        typer.echo("Leaking units (nearest other group)")
        for leak in tax.leaks[:10]:
            typer.echo(f"  {leak.unit} -> {leak.nearest_group}")
    if trajectory is not None:
        typer.echo("Growth over the history")
        typer.echo(trajectory.to_markdown())
    if report.alarms:
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in report.alarm_counts().items())
        typer.echo(f"Alarms ({len(report.alarms):,}: {kinds})")
        shown = report.alarms if max_alarms <= 0 else report.alarms[:max_alarms]
        for alarm in shown:
            typer.echo(f"  ! {alarm}")
        if len(shown) < len(report.alarms):
            typer.echo(f"  ... {len(report.alarms) - len(shown):,} more: --max-alarms 0 prints "
                       "every one, --json lists them all with their parts.")
    else:
        typer.echo("No alarms.")


def _num(value: object) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


@json_errors
def health(
    store_path: StoreArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    history: Annotated[bool, typer.Option(
        "--history", help="Also measure every snapshot of the store's history.")] = False,
    against: Annotated[str | None, typer.Option(
        help="Check that every source locator of this history step is still present.")] = None,
    locators: Annotated[Path | None, typer.Option(
        help="A file whose locators ([S5T3] ... or one per line) must still be present.")] = None,
    plots: Annotated[Path | None, typer.Option(
        help="Write tree.png (and growth/adherence PNGs with --history) into this folder.")] = None,
    tree: Annotated[bool, typer.Option(
        "--tree", help="Print the tree with headings (with --json: its nodes, under 'tree').")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the B4 pair sample.")] = 0,
    heading_depth: Annotated[str, typer.Option(
        help="'nesting': a heading is one below its parent; 'level': depth follows #s.")
    ] = "nesting",
    duplicate_cosine: Annotated[float, typer.Option(help="Near-duplicate threshold.")] = 0.9,
    description_cosine: Annotated[float, typer.Option(
        help="Descriptions below this cosine with their body are stale.")] = 0.02,
    max_lost: Annotated[float, typer.Option(
        help="Largest share of reference locators that may go missing.")] = 0.0,
    max_alarms: Annotated[int, typer.Option(
        help="Alarms printed in the text report (0: all); --json always lists every one.")
    ] = 50,
) -> None:
    """Report a store's shape (Panel A) and taxonomy adherence (Panel B), with alarms.

    Alarms: dangling cross-references, near-duplicate content across files,
    descriptions that no longer match their file, subjects given conflicting
    undated values, and source locators lost since a reference (--against STEP or
    --locators FILE). The text report counts the alarms of each kind and prints
    the first --max-alarms of them.

    The work grows linearly with the store: near-duplicates are looked for only
    among units that share rare words, and past 20 million unit-centroid
    comparisons B3 is measured on a seeded sample of units, the same units as the
    store grows (its size, standard error and interval are in the JSON as
    b3_units, b3_stderr and b3_interval; see docs/metrics.md).

    Exit status: 0 no alarm, 1 alarms raised, 2 bad input.
    """
    from memdir.metrics import (
        HeadingDepth,
        HealthThresholds,
        Measurer,
        draw_tree_png,
        draw_tree_text,
        health_report,
        plot_trajectory,
    )

    if heading_depth not in ("nesting", "level"):
        raise _fail("--heading-depth must be 'nesting' or 'level'.")
    depth = cast(HeadingDepth, heading_depth)
    try:
        store = Store(store_path)
        measurer = Measurer(seed=seed, heading_depth=depth, keep_labels=False)  # one state
        reference = _reference(store, against, locators)
        with _report_kept():
            report = health_report(
                store,
                reference=reference,
                thresholds=HealthThresholds(duplicate_cosine, description_cosine, max_lost),
                measurer=measurer,
            )
        trajectory = None
        if history:
            trajectory = _trajectory(store, Measurer(seed=seed, heading_depth=depth))
    except StoreError as exc:
        raise _fail(str(exc)) from None
    if plots is not None:
        draw_tree_png(report.metrics.tree, plots / "tree.png")
        if trajectory is not None and trajectory.rows:
            plot_trajectory(trajectory, plots)
    if as_json:
        data = report.to_dict()
        if trajectory is not None:
            data["trajectory"] = trajectory.table()
        if tree:  # the tree --tree draws in text, as its nodes in the same order
            data["tree"] = [{"kind": n.kind, "name": n.name, "path": n.path, "depth": n.depth,
                             "level": n.level} for n in report.metrics.tree.nodes]
        typer.echo(json.dumps(data, indent=2, default=str))
    else:
        if tree:
            typer.echo(draw_tree_text(report.metrics.tree))
        _print_text(report, trajectory, max_alarms)
    raise typer.Exit(EXIT_HEALTHY if report.healthy else EXIT_ALARMS)


def register(app: typer.Typer) -> None:
    """Add ``memdir health`` to the command line."""
    app.command("health")(health)
