"""One HTTP server for many stores: each request is routed by its token to one tenant's tools.

Every tenant has its own MCP server (its tool set over its own store) and its own
session manager, so a session, a store handle or a tool set is never shared
across tenants: the token picks the tenant before anything else is read, and a
session id of another tenant is unknown to this one's manager. They are built on
a tenant's first request, not at start, and closed when idle (a bounded cache). Each tenant's
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
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.types import ASGIApp, Receive, Scope, Send

from memdir.server._server import build_server
from memdir.server._tenants import Tenant, TenantIndex, hash_token, tenant_store
from memdir.server._transports import MCP_PATH, _reply, _security, check_bind
from memdir.store import DEFAULT_MAX_FILE_BYTES, Store
from memdir.tools import ToolResult, ToolSet, make_toolset

__all__ = ["DEFAULT_IDLE_SECONDS", "DEFAULT_MAX_LIVE", "TenantToolSet", "run_tenants",
           "tenant_toolset", "tenants_app"]

_LOG = logging.getLogger(__name__)


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
    if tenant.toolset == "shell":
        from memdir.tools import Quota, shell_set

        # A command is checked as it runs and after, not only before: one that leaves the
        # store past the tenant's limits is undone.
        return shell_set(store, quota=Quota(tenant.max_bytes, tenant.max_files,
                                            f"tenant {tenant.name}"))
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
    return 0, 0  # delete, rename, move: nothing grows; bash: its quota undoes it


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
            from memdir.tools import quota_usage

            self._usage = quota_usage(self.store)
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


DEFAULT_MAX_LIVE: Final = 256
"""Tenants whose tools are kept built at once, by default."""
DEFAULT_IDLE_SECONDS: Final = 300.0
"""Seconds without a request after which a tenant's tools are closed, by default."""


@dataclass(eq=False)
class _Live:
    """One tenant's built tools and streamable-HTTP app, held open by a task of the router."""

    tenant: Tenant
    app: Any
    close: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    active: int = 0
    """Requests being answered now: a tenant is never closed under one."""
    used: float = field(default_factory=time.monotonic)


class _Router:
    """The ASGI app: token -> tenant -> that tenant's streamable-HTTP app, built on demand.

    A tenant's tools, MCP server and session manager are built on its first
    request and kept in a bounded cache: past ``max_live`` tenants the least
    recently used idle one is closed, and any tenant without a request for
    ``idle_seconds`` is closed too (its sessions end; a client starts a new one).
    Start-up costs the same whatever the number of tenants.
    """

    def __init__(self, tenants: Sequence[Tenant] | TenantIndex, build: Callable[[Tenant], Any],
                 *, max_live: int = DEFAULT_MAX_LIVE, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 on_close: Callable[[Tenant, Any], None] | None = None) -> None:
        if max_live < 1 or idle_seconds <= 0:
            raise ValueError("give max_live >= 1 and idle_seconds > 0")
        self._lookup: Callable[[str], Tenant | None] = (
            tenants.get if isinstance(tenants, TenantIndex)
            else {tenant.token_sha256: tenant for tenant in tenants}.get)
        self._build = build
        self._on_close = on_close
        self.max_live = max_live
        self.idle_seconds = idle_seconds
        self._live: OrderedDict[str, _Live] = OrderedDict()
        self._opening: anyio.Lock | None = None
        self._group: TaskGroup | None = None
        self.built = 0
        """Tenants built since start (a tenant closed and asked for again counts again)."""

    @property
    def live(self) -> list[str]:
        """The tenants whose tools are built now, least recently used first."""
        return list(self._live)

    def _tenant(self, scope: Scope) -> Tenant | None:
        given = [v for k, v in scope.get("headers") or [] if k == b"authorization"]
        if len(given) != 1:
            return None
        scheme, _, token = given[0].decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token or token != token.strip():
            return None  # exactly 'Bearer <token>', as RFC 6750 writes it
        digest = hash_token(token)
        found = self._lookup(digest)
        if found is None or not hmac.compare_digest(found.token_sha256, digest):
            return None
        return found

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
        tenant = self._tenant(scope)
        if tenant is None:
            await _reply(send, 403, {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32001, "message": "memdir serve refused the request: send "
                "'Authorization: Bearer <token>' with the token your operator gave you."}})
            return
        try:
            live = await self._open(tenant)
        except _Unavailable as exc:
            await _reply(send, 503, {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32603, "message": str(exc)}})
            return
        try:
            await live.app(scope, receive, send)
        finally:
            live.active -= 1
            live.used = time.monotonic()

    async def _open(self, tenant: Tenant) -> _Live:
        """The tenant's live app, built and started if needed, with one more request on it."""
        if self._group is None or self._opening is None:
            raise _Unavailable("memdir serve is starting or stopping; try again shortly.")
        async with self._opening:
            live = self._live.get(tenant.name)
            if live is not None and live.tenant != tenant:
                self._close(tenant.name)  # the tenants file changed what it gets: build anew
                live = None
            if live is not None:
                self._live.move_to_end(tenant.name)
                live.active += 1
                return live
            try:
                app = await anyio.to_thread.run_sync(self._build, tenant)
            except Exception as exc:  # noqa: BLE001 - one tenant's broken store is its own
                _LOG.error("memdir serve: tenant %s cannot be served: %s", tenant.name, exc)
                raise _Unavailable(f"tenant {tenant.name} cannot be served now: {exc}. Tell "
                                   "the operator of this server.") from None
            live = _Live(tenant, app)
            failed = await self._group.start(self._hold, live)
            if failed is not None:
                raise _Unavailable(f"tenant {tenant.name} could not start: {failed}. Tell "
                                   "the operator of this server.")
            self.built += 1
            live.active += 1
            self._live[tenant.name] = live
            self._trim()
            return live

    def _trim(self) -> None:
        """Close the least recently used idle tenants past ``max_live``."""
        over = len(self._live) - self.max_live
        for name, live in list(self._live.items()):
            if over <= 0:
                break
            if live.active == 0:
                self._close(name)
                over -= 1

    def _close(self, name: str) -> None:
        live = self._live.pop(name)
        live.close.set()

    async def _hold(self, live: _Live, *,
                    task_status: TaskStatus[BaseException | None] = anyio.TASK_STATUS_IGNORED
                    ) -> None:
        """Run one tenant's app (its session manager) until it is closed."""
        started = False
        try:
            async with live.app.router.lifespan_context(live.app):
                started = True
                task_status.started(None)
                await live.close.wait()
        except Exception as exc:  # noqa: BLE001 - a tenant's failure is its own
            if not started:
                task_status.started(exc)
            else:
                _LOG.exception("memdir serve: tenant %s stopped with an error", live.tenant.name)
        finally:
            live.closed.set()
            if self._on_close is not None:
                # Its syncer's last sync may talk to a remote: never on the event loop.
                threading.Thread(target=self._closed, args=(live.tenant, live.app), daemon=True,
                                 name="memdir-tenant-close").start()

    def _closed(self, tenant: Tenant, app: Any) -> None:
        assert self._on_close is not None
        try:
            self._on_close(tenant, app)
        except Exception:  # noqa: BLE001 - logged; one tenant's failure is its own
            _LOG.exception("memdir serve: closing tenant %s failed", tenant.name)

    async def _sweep(self) -> None:
        """Close tenants idle for ``idle_seconds``, checking a few times per period."""
        while True:
            await anyio.sleep(min(30.0, self.idle_seconds / 4))
            now = time.monotonic()
            for name, live in list(self._live.items()):
                if live.active == 0 and now - live.used >= self.idle_seconds:
                    self._close(name)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        async with anyio.create_task_group() as group:
            self._group, self._opening = group, anyio.Lock()
            group.start_soon(self._sweep)
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
            self._group = None
            held = list(self._live.values())
            for name in list(self._live):
                self._close(name)
            with anyio.move_on_after(10):  # each session manager ends its sessions
                for live in held:
                    await live.closed.wait()
            group.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})


class _Unavailable(Exception):
    """A tenant's tools cannot be opened now; the message says why, for the client."""


def tenants_app(tenants: Sequence[Tenant] | TenantIndex, stores: Path, *, host: str,
                port: int, on_write: Callable[[Tenant, Store], None] | None = None,
                on_open: Callable[[Tenant, Store], None] | None = None,
                on_close: Callable[[Tenant, Store], None] | None = None,
                max_file_bytes: int | None = None, max_live: int = DEFAULT_MAX_LIVE,
                idle_seconds: float = DEFAULT_IDLE_SECONDS) -> ASGIApp:
    """The ASGI app serving every tenant at ``/mcp``, each request routed by its token.

    Nothing is built per tenant until its first request: then its store, tool
    set, MCP server and session manager are made and kept while it is in use
    (see :class:`_Router` for the cache's bounds).

    Args:
        tenants: Who may call, with what: a list (see :func:`memdir.server.load_tenants`)
            or a :class:`~memdir.server.TenantIndex`, looked up by token hash per request.
        stores: The folder holding every tenant's store folder.
        host: The bound address (requests must name it: DNS rebinding protection).
        port: The bound port.
        on_write: Called with the tenant and its store after each write it made.
        on_open: Called with the tenant and its store when its tools are built (on a
            worker thread, before its first request is answered).
        on_close: Called with the tenant and its store once its tools are closed (on
            a thread of its own).
        max_file_bytes: The per-file cap of every store (default: the store's).
        max_live: Most tenants kept built at once.
        idle_seconds: A tenant without a request for this long is closed.
    """
    opened: dict[int, Store] = {}  # id of a tenant's app -> its store, while it is built

    def build(tenant: Tenant) -> Any:
        folder = tenant_store(stores, tenant)
        store = Store(folder, max_file_bytes=max_file_bytes or DEFAULT_MAX_FILE_BYTES)
        notify = None if on_write is None else functools.partial(on_write, tenant, store)
        toolset = TenantToolSet(tenant, tenant_toolset(tenant, store), store, notify)
        server = build_server(toolset)
        app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host.strip("[]"),
                                         transport_security=_security(host, port))
        if on_open is not None:
            on_open(tenant, store)
        opened[id(app)] = store
        return app

    def closed(tenant: Tenant, app: Any) -> None:
        store = opened.pop(id(app), None)
        if store is not None and on_close is not None:
            on_close(tenant, store)

    return _Router(tenants, build, max_live=max_live, idle_seconds=idle_seconds,
                   on_close=closed)


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
