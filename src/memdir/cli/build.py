"""``memdir build``: build one variant's store of one benchmark conversation.

The store is the one a study cell of that variant reads: the same conversation
(a PersonaMem context cut at its last checkpoint), the same builder and, for the
model-built variants, the same cached, resumable build. The builders (and with
them inspect_ai) are imported only when the command runs.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from memdir.builders import CATALOG, VARIANTS, variant_hint
from memdir.cli._common import console, err_console, fail
from memdir.cli.ask import format_cost
from memdir.config import get_settings

if TYPE_CHECKING:
    from memdir.bench import Conversation, Dataset

__all__ = ["build_command", "register"]


def _dataset_names() -> list[str]:
    from memdir.bench import BENCHMARKS

    names = []
    for name, entry in BENCHMARKS.items():
        names.append(name)
        names.extend(f"{name}-{tier}" for tier in entry.tiers)
    return names


def _split_dataset(dataset: str) -> tuple[str, str | None]:
    """``personamem-128k`` -> (``personamem``, ``128k``); a bare name takes its default tier."""
    from memdir.bench import BENCHMARKS

    if dataset in BENCHMARKS:
        return dataset, None
    name, _, tier = dataset.rpartition("-")
    if name in BENCHMARKS and tier in BENCHMARKS[name].tiers:
        return name, tier
    fail(f"unknown dataset {dataset!r}.", f"choose one of {', '.join(_dataset_names())}.")


def _load(dataset: str, data: Path | None) -> Dataset:
    from memdir.bench import DatasetError, load_benchmark

    folder = data or get_settings().data_dir
    if folder is None:
        fail("no benchmark folder.", "pass --data DIR or set MEMDIR_DATA_DIR "
             "(the layout is in docs/datasets.md).")
    benchmark, tier = _split_dataset(dataset)
    try:
        return load_benchmark(benchmark, Path(folder).expanduser(), tier)
    except DatasetError as exc:
        fail(str(exc), "pass --data DIR (or MEMDIR_DATA_DIR) pointing at the benchmark folder.")


def _conversation(dataset: Dataset, ref: str) -> Conversation:
    from memdir.bench import benchmark_entry
    from memdir.study import resolve_conversation

    try:
        conversation_id = resolve_conversation(dataset, ref)
        conversation, _ = benchmark_entry(dataset.benchmark).cell_questions(dataset,
                                                                            conversation_id)
    except KeyError:
        ids = [c.id for c in dataset.conversations]
        shown = ", ".join(ids[:12]) + (f", ... ({len(ids)} in all)" if len(ids) > 12 else "")
        fail(f"no conversation {ref!r} in {dataset.benchmark}.",
             f"use an id ({shown}) or a position #1 to #{len(ids)}.")
    return conversation


def build_command(
    variant: Annotated[str, typer.Argument(
        help=f"The variant: {', '.join(v for v in VARIANTS if CATALOG[v].needs_store)}.")],
    dataset: Annotated[str, typer.Argument(
        help="The benchmark: locomo, realtalk, personamem (32k), or personamem-128k.")],
    conversation: Annotated[str, typer.Argument(
        help="A conversation id of the benchmark, or #n for its n-th conversation.")],
    store: Annotated[Path, typer.Argument(
        help="The folder to write the store into (new, or empty).", metavar="STORE")],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="The builder model of a model-built variant "
        "(default: MEMDIR_MODEL).")] = None,
    data: Annotated[Path | None, typer.Option(
        "--data", help="The benchmark folder (default: MEMDIR_DATA_DIR).")] = None,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Where model-built stores are built, reused and resumed "
        "(default: the builds folder of MEMDIR_CACHE_DIR).")] = None,
    chunk_tokens: Annotated[int, typer.Option(
        "--chunk-tokens", min=200, help="The chunk budget (chunk and curated).")] = 4000,
    max_passes: Annotated[int, typer.Option(
        "--max-passes", min=1, help="Most reorganization passes.")] = 5,
    max_rounds: Annotated[int | None, typer.Option(
        "--max-rounds", min=1, help="Tool rounds per builder episode (the role's default: "
        "60).")] = None,
    prices: Annotated[Path | None, typer.Option(
        "--prices", help="YAML price table merged over the defaults.")] = None,
    show_progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="A line per finished chunk or pass on stderr, "
        "with the time elapsed and an estimate of the time left (default: only in a "
        "terminal).")] = None,
) -> None:
    """Build the store a study cell of VARIANT reads, for one benchmark conversation.

    verbatim and chunk are rendered from the conversation at no cost. The
    model-built variants (foldered, reorganized-preserve, reorganized-condense,
    curated) are written by --model in a build folder under --cache, keyed by
    their whole configuration: a finished build is reused without a model call,
    an interrupted one resumes where it stopped. The finished store, with its git
    history of every unit, is then copied into STORE.

    Exit status: 0 built, 2 could not build (bad argument, missing data, a model
    error that survived retries; rerun the same command to resume).

    For example:

        memdir build verbatim locomo conv-50 ./conv-50 --data ../shared/data

    \b
        memdir build curated realtalk Chat_10 ./chat-10 --data ../shared/data \\
            -m openai/gpt-5.4-mini
    """  # noqa: D301 (click shows a paragraph after \b as written, unwrapped)
    if variant not in CATALOG:
        fail(f"unknown variant {variant!r}.", f"{variant_hint(variant)}.")
    spec = CATALOG[variant]
    if not spec.needs_store:
        fail(f"{variant} keeps no store, so there is nothing to build.",
             "build verbatim, chunk or a model-built variant.")
    if store.exists() and (not store.is_dir() or any(store.iterdir())):
        fail(f"{store} is not an empty folder.", "name a new folder for the store.")
    chosen = model or get_settings().model
    if spec.model_built and chosen is None:
        fail(f"{variant} is written by a model.", "pass --model provider/model or set "
             "MEMDIR_MODEL.")
    if spec.model_built:
        _check_model(chosen)  # before any build folder is made for it
    convo = _conversation(_load(dataset, data), conversation)
    _run(variant, convo, store, chosen if spec.model_built else None,
         cache or get_settings().cache_dir.expanduser() / "builds",
         chunk_tokens, max_passes, max_rounds, prices, show_progress)


def _check_model(model: str | None) -> None:
    """Stop at once if ``model`` cannot be used here (no API key, no provider SDK)."""
    from memdir.agents import ModelSetupError, resolve_model

    assert model is not None
    try:
        resolve_model(model)
    except ModelSetupError as exc:
        fail(str(exc), "set the key or install the SDK named above, or pick another --model.")
    except ValueError as exc:
        fail(str(exc))


def _run(variant: str, conversation: Conversation, store: Path, model: str | None,
         cache: Path, chunk_tokens: int, max_passes: int, max_rounds: int | None,
         prices: Path | None, show_progress: bool | None) -> None:
    from memdir.agents import AgentError, PriceTable
    from memdir.builders import BuildError, build_variant
    from memdir.progress import reporting

    if model is not None:
        err_console.print(f"[dim]building {variant} of {escape(conversation.id)} with "
                          f"{escape(model)} in {escape(str(cache))} (a rerun resumes)[/]")
    try:
        with reporting(enabled=show_progress):
            built = asyncio.run(build_variant(
                variant, conversation, store_dir=store, cache=cache, model=model,
                max_rounds=max_rounds, chunk_tokens=chunk_tokens, max_passes=max_passes,
                prices=PriceTable.load(prices)))
    except (BuildError, AgentError) as exc:
        fail(str(exc), "rerun the same command to resume from the last finished unit.")
    except ValueError as exc:
        fail(str(exc))
    record = built.record
    if built.built is not None:
        shutil.copytree(built.built.store.root, store, dirs_exist_ok=True, symlinks=True)
    console.print(f"{variant} store of {escape(conversation.id)}: {len(record.files)} "
                  f"file(s), {record.bytes:,} bytes -> {escape(str(store))}")
    if built.built is not None:
        reused = " (reused from the cache)" if record.reused else ""
        err_console.print(
            f"[dim]{len(record.units)} unit(s), {record.model_calls} model call(s), "
            f"cost {escape(format_cost(record.cost, model or ''))}{reused}; build folder "
            f"{escape(str(built.built.folder))}[/]")


def register(app: typer.Typer) -> None:
    """Add ``build`` to the command line."""
    app.command("build")(build_command)
