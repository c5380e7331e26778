"""``memdir serve``: offer a store's tools to MCP clients."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import anyio
import typer

from memdir.cli._common import (
    StoreArg,
    cannot_bind,
    err_console,
    fail,
    keep_startup_heap,
    load_toolset,
    open_store,
)
from memdir.config import get_settings

__all__ = ["Profile", "Transport", "register", "serve"]


class Profile(StrEnum):
    """Whose memory-tool behaviour the tools follow."""

    memdir = "memdir"
    anthropic = "anthropic"


class Transport(StrEnum):
    """How clients reach the server."""

    stdio = "stdio"
    http = "http"


def serve(
    store_path: StoreArg,
    write: Annotated[
        bool,
        typer.Option("--write", help="Offer the write set (view, create, str_replace, insert, "
                     "delete, rename, grep) instead of the read-only read set."),
    ] = False,
    set_name: Annotated[
        str | None,
        typer.Option("--set", metavar="SET",
                     help="Offer another of memdir's tool sets by name (as memdir tool --set "
                     "takes it), e.g. bm25 for the read set plus ranked search."),
    ] = None,
    profile: Annotated[
        Profile,
        typer.Option("--profile", help="memdir (its own sets and contract) or anthropic (the "
                     "memory commands as Anthropic's reference memory tool runs them: any file "
                     "name, no frontmatter, its result texts)."),
    ] = Profile.memdir,
    transport: Annotated[
        Transport, typer.Option("--transport", "-t", help="stdio (the client starts this "
                                "process) or http (streamable HTTP at /mcp).")
    ] = Transport.stdio,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind for http: loopback only (127.0.0.1, "
                          "::1 or [::1], localhost, 127.x.y.z) unless --allow-remote.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535,
                                      help="TCP port for http.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option("--token",
                     help="For http: require 'Authorization: Bearer TOKEN' on every request "
                     "(403 otherwise). Defaults to MEMDIR_MCP_TOKEN; prefer the environment "
                     "variable, which stays out of the process list."),
    ] = None,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Permit a --host other machines can reach; "
                           "refused without a token. Use it behind TLS.")
    ] = False,
    sync: Annotated[
        bool, typer.Option("--sync", help="Keep the store in step with its git remote (see "
                           "memdir sync): on start, a few seconds after writes, every "
                           "--sync-interval seconds, and on stop.")
    ] = False,
    sync_interval: Annotated[
        float, typer.Option("--sync-interval", min=1, help="Seconds between syncs when "
                            "nothing is written (with --sync).")
    ] = 60.0,
    writer: Annotated[
        str | None, typer.Option("--writer", help="Who writes through this server, named in "
                                 "the commits --sync makes (default: mcp-stdio or mcp-http).")
    ] = None,
    tenants: Annotated[
        Path | None, typer.Option("--tenants", metavar="FILE", help="Serve many stores over "
                                  "http: STORE is a folder of stores and FILE (see memdir "
                                  "tenants) maps each token to one store, a tool set, read or "
                                  "write access and limits.")
    ] = None,
) -> None:
    """Serve a store's tools to MCP clients (Claude Desktop, IDEs, agents).

    By default the read set (view, grep, toc, section_read) is offered, so a
    client can search the store but not change it; --write offers the write
    set instead, and --set any other named set (bm25 adds ranked search).
    With --profile anthropic the memory commands behave as
    Anthropic's reference memory tool (view only, or all six with --write),
    for clients that expect Claude's memory tool. Each tool is declared
    with its schema and with hints saying whether it only reads, or may
    overwrite or remove content. A tool error is returned to the client as a
    tool result flagged isError, so the model can correct itself.

    Over stdio the client starts this command and talks on its standard input
    and output. Over http the server listens at http://HOST:PORT/mcp, bound to
    a loopback address unless --allow-remote is given (with a token), and
    answers only requests whose Host names that address and port.

    Every tool call is bounded by MEMDIR_TOOL_TIME_LIMIT seconds and runs off
    the server's event loop, so one slow call never holds up other sessions.

    With --tenants FILE (http only) one server serves a folder of stores:
    each request's bearer token picks its tenant, whose store, tool set,
    access and limits (bytes, files, calls per second) FILE gives; no token
    reaches another tenant's store.

    With --sync the store, a replica (see memdir clone), is synced with its
    git remote as it starts, a few seconds after writes (batched), every
    --sync-interval seconds, and once more as the server stops; each commit
    names the replica and --writer. An unreachable remote is reported in one
    line on stderr and the server keeps serving.

    Exit status: 0 stopped cleanly (client closed, SIGTERM), 2 bad store or
    refused options, 130 stopped by Ctrl-C.

    For example:

        memdir serve ./memories

        memdir serve ./memories --profile anthropic --write

        memdir serve ./memories --set bm25

        MEMDIR_MCP_TOKEN=s3cret memdir serve ./memories --transport http

        memdir serve ./memories --write --sync --writer claude-desktop

        memdir serve ./stores --tenants tenants.yaml --transport http
    """
    # Imported here: the MCP SDK takes most of a second to load, and other commands never need it.
    from memdir.server import (
        MCP_PATH,
        LoopbackError,
        allowed_hosts,
        build_server,
        check_bind,
        is_loopback,
        run_http,
        run_stdio,
    )

    if tenants is not None:
        from memdir.cli._tenant_serve import serve_tenants

        if transport is not Transport.http or token or write or profile is not Profile.memdir:
            fail("--tenants serves over http with each tenant's own token, tool set and access.",
                 "add --transport http, and drop --token, --write and --profile (the tenants "
                 "file says them per tenant).")
        serve_tenants(store_path, tenants, host=host, port=port, allow_remote=allow_remote,
                      sync=sync, sync_interval=sync_interval)
        return
    configured = get_settings().mcp_token
    if token is None and configured is not None:
        token = configured.get_secret_value()
    if transport is Transport.http:
        try:
            check_bind(host, token=token, allow_remote=allow_remote)
        except LoopbackError as exc:
            hint = ("set MEMDIR_MCP_TOKEN (or --token) as well." if allow_remote
                    else "use --host 127.0.0.1, or add --allow-remote and a token if you mean it.")
            fail(f"refusing to bind {host}: {exc}.", hint)
    if transport is Transport.stdio and token:
        err_console.print("[yellow]note:[/] --token applies to http only; over stdio the "
                          "client that starts the process is trusted.")
    if set_name is not None and (write or profile is Profile.anthropic):
        fail("--set names the whole tool set, so it goes without --write and --profile "
             "anthropic.", f"use --set {set_name} alone, or --write without --set.")
    store = open_store(store_path, reads_only=True)  # a first write sweeps; no walk to start
    if profile is Profile.anthropic:
        from memdir.tools.anthropic import anthropic_set

        toolset = anthropic_set(store, read_only=not write)
    else:
        toolset = load_toolset(set_name or ("write" if write else "read"), store)
    server = build_server(toolset)
    if sync:  # syncs now, then in the background; the last sync runs as the process exits
        from memdir.cli._syncing import start_syncer

        start_syncer(store, interval=sync_interval, writer=writer or f"mcp-{transport.value}",
                     stop_at_exit=True)
    if transport is Transport.stdio:
        from memdir.cli._fastserve import feed, serving

        try:
            serving()
            keep_startup_heap()
            anyio.run(run_stdio, server, feed())
        except KeyboardInterrupt:
            err_console.print("stopped.")
            raise typer.Exit(130) from None
        return
    problem = cannot_bind(host, port)
    if problem:
        fail(f"cannot listen on {host}:{port}: {problem}.",
             "pick a free port with --port, or stop whatever holds this one.")
    gate = "bearer token required" if token else "no token"
    shown = (allowed_hosts(host, port) or [f"{host}:{port}"])[0]
    remote = "" if is_loopback(host) else " (reachable from other machines)"
    err_console.print(f"memdir MCP server ({toolset.name} set, {gate}) on "
                      f"http://{shown}{MCP_PATH}{remote}; Ctrl-C stops it.")
    keep_startup_heap()
    try:
        run_http(server, host=host, port=port, token=token, allow_remote=allow_remote)
    except SystemExit as exc:  # uvicorn exits this way when it cannot start
        if exc.code:
            fail(f"the HTTP server could not start (uvicorn exit status {exc.code}).",
                 "see the message above.")


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the command line."""
    app.command("serve")(serve)
