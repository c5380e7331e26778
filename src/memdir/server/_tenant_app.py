"""One HTTP server for many stores: each request is routed by its token to one tenant's tools.

Every tenant has its own MCP server (its tool set over its own store) and its own
session manager, so a session, a store handle or a tool set is never shared
across tenants: the token picks the tenant before anything else is read, and a
session id of another tenant is unknown to this one's manager. Each tenant's
calls pass its limits first: tool calls per second (a token bucket), and, for a
call that writes, the bytes and files its store may hold. A refused call is a
tool result flagged as an error that says which limit, where the store stands
and what to do, so a model can act on it.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from memdir.server._server import build_server
from memdir.server._tenants import Tenant, hash_token, tenant_store
from memdir.server._transports import MCP_PATH, _reply, _security, check_bind
from memdir.store import DEFAULT_MAX_FILE_BYTES, Store
from memdir.tools import ToolResult, ToolSet, make_toolset

__all__ = ["TenantToolSet", "run_tenants", "tenant_toolset", "tenants_app"]


def tenant_toolset(tenant: Tenant, store: Store) -> ToolSet:
    """The tools a tenant gets: its set, reduced to the tools that only read for ``read``.

    Raises:
        ValueError: With read access, the set has no tool that only reads.
    """
    write = tenant.access == "write"
    if tenant.toolset == "anthropic":
        from memdir.tools.anthropic import anthropic_set

        return anthropic_set(store, read_only=not write)
    if tenant.toolset == "shell" and not write:
        return make_toolset("shell-read", store)
    toolset = make_toolset(tenant.toolset, store)
    if write:
        return toolset
    kept = [spec for spec in toolset.tools.values() if spec.read_only]
    if not kept:
        raise ValueError(f"tenant {tenant.name}: the {tenant.toolset} set has no tool that only "
                         "reads; give it write access or a reading set such as read.")
    return ToolSet(toolset.name, kept, limits=toolset.limits)


class _Bucket:
    """A token bucket: ``rate`` calls a second, bursts up to ``burst``."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.level, self.at = burst, time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> float:
        """0 when a call may go now, else the seconds until one may."""
        with self._lock:
            now = time.monotonic()
            self.level = min(self.burst, self.level + (now - self.at) * self.rate)
            self.at = now
            if self.level >= 1:
                self.level -= 1
                return 0.0
            return (1 - self.level) / self.rate


def _arguments(arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return dict(arguments or {})


def _growth(name: str, args: Mapping[str, Any]) -> tuple[int, int]:
    """At most how many bytes and files a write call adds."""

    def size(key: str) -> int:
        value = args.get(key)
        return len(value.encode("utf-8", "replace")) if isinstance(value, str) else 0

    if name == "create":
        return size("file_text"), 1
    if name == "str_replace":
        return max(0, size("new_str") - size("old_str")), 0
    if name == "insert":
        return size("insert_text") + 1, 0
    return 0, 0  # delete, rename, move: nothing grows; bash: checked before and after


class TenantToolSet(ToolSet):
    """A tenant's tool set behind its limits; writes are noted through ``on_write``.

    Args:
        tenant: Whose limits apply.
        inner: The tools.
        store: The tenant's store (its usage is what the limits measure).
        on_write: Called after each write call that succeeded.
    """

    def __init__(self, tenant: Tenant, inner: ToolSet, store: Store,
                 on_write: Callable[[], None] | None = None) -> None:
        super().__init__(inner.name, inner.tools.values(), limits=inner.limits)
        self.tenant = tenant
        self.inner = inner
        self.store = store
        self.on_write = on_write
        self._bucket = _Bucket(tenant.calls_per_second, max(1.0, 2 * tenant.calls_per_second))
        self._usage: tuple[int, int] | None = None
        self._writes: asyncio.Lock | None = None

    def usage(self) -> tuple[int, int]:
        """The bytes and files the store holds now (one walk, kept until the next write)."""
        if self._usage is None:
            nodes = [n for n in self.store.tree() if n.kind in ("memory", "other")]
            self._usage = (sum(n.size for n in nodes), len(nodes))
        return self._usage

    def _refusal(self, name: str, args: Mapping[str, Any]) -> str | None:
        used_bytes, used_files = self.usage()
        more_bytes, more_files = _growth(name, args)
        t = self.tenant
        if used_files + more_files > t.max_files:
            return (f"Error: {name} was refused: this store holds {used_files:,} of the "
                    f"{t.max_files:,} files tenant {t.name} may keep. Delete or merge files "
                    "first, or ask the operator to raise max_files.")
        if used_bytes + more_bytes > t.max_bytes:
            return (f"Error: {name} was refused: this store holds {used_bytes:,} of the "
                    f"{t.max_bytes:,} bytes tenant {t.name} may keep, and this call could add "
                    f"{more_bytes:,}. Shorten or delete files first, or ask the operator to "
                    "raise max_bytes.")
        return None

    async def call(self, name: str, arguments: Mapping[str, Any] | str | None) -> ToolResult:
        """Run one call within the tenant's limits (see the module's description)."""
        wait = self._bucket.take()
        if wait:
            return ToolResult(name, (
                f"Error: {name} was refused: tenant {self.tenant.name} may make "
                f"{self.tenant.calls_per_second:g} tool calls per second. Wait {wait:.2f} s, "
                "then call again."), True)
        spec = self.tools.get(name)
        if spec is None or spec.read_only:
            return await self.inner.call(name, arguments)
        if self._writes is None:
            self._writes = asyncio.Lock()
        async with self._writes:  # one write at a time, so two cannot both pass the check
            args = _arguments(arguments)
            refused = await asyncio.to_thread(self._refusal, name, args)
            if refused is not None:
                return ToolResult(name, refused, True)
            try:
                result = await self.inner.call(name, arguments)
            finally:
                self._usage = None
            if not result.is_error and self.on_write is not None:
                self.on_write()
            return result


class _Router:
    """The ASGI app: token -> tenant -> that tenant's streamable-HTTP app."""

    def __init__(self, apps: Mapping[str, tuple[Tenant, Any]]) -> None:
        self._by_hash = {tenant.token_sha256: (tenant, app) for tenant, app in apps.values()}

    def _tenant_app(self, scope: Scope) -> ASGIApp | None:
        given = [v for k, v in scope.get("headers") or [] if k == b"authorization"]
        if len(given) != 1:
            return None
        scheme, _, token = given[0].decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token or token != token.strip():
            return None  # exactly 'Bearer <token>', as RFC 6750 writes it
        digest = hash_token(token)
        found = self._by_hash.get(digest)
        if found is None or not hmac.compare_digest(found[0].token_sha256, digest):
            return None
        app: ASGIApp = found[1]
        return app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if str(scope.get("path", "")).startswith("/.well-known/"):
            await _reply(send, 404, {"error": "not_found", "error_description":
                                     "memdir serve takes a fixed bearer token per tenant; "
                                     "there is no OAuth authorization server."})
            return
        app = self._tenant_app(scope)
        if app is None:
            await _reply(send, 403, {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32001, "message": "memdir serve refused the request: send "
                "'Authorization: Bearer <token>' with the token your operator gave you."}})
            return
        await app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with AsyncExitStack() as stack:
            message = await receive()
            assert message["type"] == "lifespan.startup"
            try:
                for _tenant, app in {id(a): a for a in self._by_hash.values()}.values():
                    await stack.enter_async_context(app.router.lifespan_context(app))
            except Exception as exc:  # reported to the server, which stops
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
        await send({"type": "lifespan.shutdown.complete"})


def tenants_app(tenants: Sequence[Tenant], stores: Path, *, host: str, port: int,
                on_write: Callable[[Tenant, Store], None] | None = None,
                max_file_bytes: int | None = None) -> ASGIApp:
    """The ASGI app serving every tenant at ``/mcp``, each request routed by its token.

    Args:
        tenants: Who may call, with what (see :func:`memdir.server.load_tenants`).
        stores: The folder holding every tenant's store folder.
        host: The bound address (requests must name it: DNS rebinding protection).
        port: The bound port.
        on_write: Called with the tenant and its store after each write it made.
        max_file_bytes: The per-file cap of every store (default: the store's).
    """
    apps: dict[str, tuple[Tenant, Any]] = {}
    for tenant in tenants:
        folder = tenant_store(stores, tenant)
        store = Store(folder, max_file_bytes=max_file_bytes or DEFAULT_MAX_FILE_BYTES)
        notify = None if on_write is None else functools.partial(on_write, tenant, store)
        toolset = TenantToolSet(tenant, tenant_toolset(tenant, store), store, notify)
        server = build_server(toolset)
        app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host.strip("[]"),
                                         transport_security=_security(host, port))
        apps[tenant.name] = (tenant, app)
    return _Router(apps)


def run_tenants(app: ASGIApp, *, host: str, port: int, allow_remote: bool = False) -> None:
    """Serve a :func:`tenants_app` at ``http://host:port/mcp`` until interrupted.

    Every request needs a tenant's token, so a non-loopback ``host`` is allowed
    with ``allow_remote`` alone.

    Raises:
        LoopbackError: ``host`` is not loopback and ``allow_remote`` is not set.
    """
    import anyio
    import uvicorn

    check_bind(host, token="tenant tokens", allow_remote=allow_remote)
    config = uvicorn.Config(app, host=host.strip("[]"), port=port, log_level="warning",
                            lifespan="on", timeout_graceful_shutdown=2)
    anyio.run(uvicorn.Server(config).serve)
