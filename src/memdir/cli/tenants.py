"""``memdir tenants``: keep the tenants file of a server that serves many stores."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memdir.cli._common import fail, print_json

__all__ = ["register"]

tenants_app = typer.Typer(
    help="Keep the tenants file of `memdir serve STORES --tenants FILE`: which token reaches "
    "which store, with which tools and limits. Tokens are kept only as SHA-256 hashes. "
    "Exit status: 0 done, 2 bad input.",
    no_args_is_help=True,
)

FileArg = Annotated[Path, typer.Argument(metavar="FILE", help="The tenants file (YAML).")]


@tenants_app.command("add")
def add(
    file: FileArg,
    name: Annotated[str, typer.Argument(help="The tenant's name (lowercase, digits, hyphens).")],
    store: Annotated[str | None, typer.Option(
        "--store", help="The store folder inside the stores folder (default: NAME).")] = None,
    toolset: Annotated[str, typer.Option(
        "--toolset", help="The tool set: read, write, bm25, bm25-write, bm25-folder, chunk, "
        "folder, shell, shell-read or anthropic.")] = "write",
    access: Annotated[str, typer.Option(
        "--access", help="read (only the set's tools that never change the store) or "
        "write.")] = "write",
    max_bytes: Annotated[int | None, typer.Option(
        "--max-bytes", min=1, help="Most bytes the store may hold (default 50,000,000).")] = None,
    max_files: Annotated[int | None, typer.Option(
        "--max-files", min=1, help="Most files the store may hold (default 10,000).")] = None,
    calls_per_second: Annotated[float | None, typer.Option(
        "--calls-per-second", min=0.001, help="Tool calls per second (default 10).")] = None,
) -> None:
    """Add a tenant with a new random token, and print the token (shown only this once).

    For example:

        memdir tenants add tenants.yaml alice --toolset write --max-bytes 5000000
    """
    from memdir.server import TenantsError, add_tenant

    try:
        token = add_tenant(file, name, store=store or name, toolset=toolset, access=access,
                           max_bytes=max_bytes, max_files=max_files,
                           calls_per_second=calls_per_second)
    except (TenantsError, OSError) as exc:
        fail(str(exc))
    typer.echo(token)
    typer.echo(f"tenant {name} added to {file}; give it the token above (it is not stored).",
               err=True)


@tenants_app.command("list")
def list_tenants(
    file: FileArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the tenants: store, tool set, access and limits (never tokens)."""
    from dataclasses import asdict

    from memdir.server import TenantsError, load_tenants

    try:
        found = load_tenants(file)
    except TenantsError as exc:
        fail(str(exc))
    if as_json:
        print_json([{k: v for k, v in asdict(t).items() if k != "token_sha256"} for t in found])
        return
    for t in found:
        typer.echo(f"{t.name}: store {t.store}, {t.toolset} set, {t.access} access, "
                   f"{t.max_bytes:,} bytes, {t.max_files:,} files, {t.calls_per_second:g} "
                   "calls/s")


def register(app: typer.Typer) -> None:
    """Add ``memdir tenants`` to the command line."""
    app.add_typer(tenants_app, name="tenants")
