"""The browser's ASGI application: routes, the token gate and serving on loopback.

The same rule as the HTTP MCP server: bind loopback addresses only, and require
the session's own token (made fresh by ``memdir browse``, never the MCP server's)
on every request. A browser cannot set an ``Authorization`` header from a link, so
the token is the first segment of every page's path (``/TOKEN/s/store/``) and no
cookie is ever set: browsers send a host's cookies to all its ports, so any local
user listening on another loopback port would receive one. Every response carries
a Content-Security-Policy that lets the page load nothing but this server's own
style sheet and images (a memory file's ``![](http://...)`` loads nothing), and
``Referrer-Policy: no-referrer``, so following a link out of a page sends no URL
with the token. Hosts other than loopback names are refused (a guard against DNS
rebinding).
"""

from __future__ import annotations

import hmac
import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from importlib.resources import files
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir.browse._context import Browser
from memdir.browse._history_pages import history_page
from memdir.browse._sources import Catalog
from memdir.browse._store_pages import file_page, health_page, search_page, tree_page, turn_page
from memdir.server import LoopbackError, is_loopback

__all__ = ["SECURITY_HEADERS", "TokenGate", "browse_app", "serve"]

_LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
"""Sent with every response, refusals and errors included."""


class _SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


class TokenGate:
    """ASGI middleware admitting requests whose path starts with the token, or that bear it.

    ``/TOKEN/rest`` is served as ``/rest`` under the root path ``/TOKEN`` (so the
    pages' links, all made with that prefix, keep it); a request with the header
    ``Authorization: Bearer TOKEN`` (scripts) is served at its own path.

    Args:
        app: The application to protect.
        token: The session's secret (letters, digits, ``-`` and ``_`` only).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token or not all(c.isascii() and (c.isalnum() or c in "-_") for c in token):
            raise ValueError("the browser's token must be a non-empty URL-safe string")
        self.app = app
        self._token = token.encode()
        self.prefix = f"/{token}"

    def _ok(self, given: bytes) -> bool:
        return hmac.compare_digest(given, self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        first, slash, _ = path[1:].partition("/")
        if self._ok(first.encode("utf-8", "replace")):
            if not slash:  # /TOKEN: the tree needs the slash for its links
                await RedirectResponse(self.prefix + "/", status_code=307)(scope, receive, send)
                return
            await self.app({**scope, "root_path": scope.get("root_path", "") + self.prefix},
                           receive, send)
            return
        bearer = dict(scope.get("headers") or []).get(b"authorization", b"")
        if bearer.startswith(b"Bearer ") and self._ok(bearer[7:]):
            await self.app(scope, receive, send)
            return
        response = Response(
            "This memdir browser needs its token: open the URL that `memdir browse` "
            "printed (http://HOST:PORT/TOKEN/).\n", status_code=401,
            media_type="text/plain", headers={"WWW-Authenticate": 'Bearer realm="memdir"'})
        await response(scope, receive, send)


Page = Callable[[Browser, Request], Any]


def _route(path: str, page: Page, browser: Browser) -> Route:
    """A route to ``page``; synchronous pages run in a worker thread (they read files)."""
    endpoint = partial(page, browser)
    if inspect.iscoroutinefunction(page):
        async def run_async(request: Request) -> Response:
            result: Awaitable[Response] = endpoint(request)
            return await result
        return Route(path, run_async)

    async def run_sync(request: Request) -> Response:
        result: Response = await anyio.to_thread.run_sync(endpoint, request)
        return result
    return Route(path, run_sync)


def _run_page(name: str) -> Page:
    """A page of a study or skills run, whose module (and the run readers) loads on first use.

    Those readers load inspect_ai, seconds of a browser's start that a session of
    plain stores never uses.
    """
    def page(browser: Browser, request: Request) -> Response:
        from memdir.browse import _run_pages

        shown: Response = getattr(_run_pages, name)(browser, request)
        return shown
    return page


def _index(browser: Browser, request: Request) -> Response:
    catalog = browser.catalog
    if catalog.kind == "store":
        return RedirectResponse(browser.store_url(next(iter(catalog.stores))), status_code=307)
    shown: Response = _run_page("run_page")(browser, request)
    return shown


def browse_app(catalog: Catalog, *, token: str | None, host: str = "127.0.0.1") -> ASGIApp:
    """The browser for ``catalog`` as an ASGI app, behind the token gate when a token is set.

    Args:
        catalog: What to show (see :func:`memdir.browse.open_target`).
        token: The secret every request must carry, as the first segment of its path
            or as a bearer token (None: no gate, for in-process tests). Use a fresh
            one per session (``secrets.token_urlsafe(32)``), never another server's.
        host: The loopback address it is served on; requests naming it are admitted
            besides the usual loopback names (``--host 127.0.0.2`` was refused before).
    """
    browser = Browser(catalog, base=f"/{token}" if token else "")

    async def error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        # Under /s/<store>/ the page keeps that store's navigation (tree, history, search),
        # and so does any page of a session that shows one store and no run.
        path, root = request.url.path, str(request.scope.get("root_path", ""))
        below = path.removeprefix(root)  # below the token, when it is in the path
        parts = below.split("/")
        sid = parts[2] if len(parts) > 2 and parts[1] == "s" else None
        if sid is None and catalog.kind == "store" and len(catalog.stores) == 1:
            sid = next(iter(catalog.stores))
        where = {"entry": catalog.stores[sid]} if sid in catalog.stores else {}
        detail = exc.detail
        if exc.status_code == 404 and detail == "Not Found":  # no route: say what to do
            detail = (f"No page of this session is at {below}; start again from the "
                      "memdir browse link at the top left.")
        return browser.page("error.html", status_code=exc.status_code, code=exc.status_code,
                            detail=detail, **where)

    routes = [
        _route("/", _index, browser),
        _route("/run/cell/{key}", _run_page("study_cell_page"), browser),
        _route("/run/log/{key}/{n:int}", _run_page("log_file"), browser),
        _route("/run/chain/{cell}/{chain}", _run_page("chain_page"), browser),
        _route("/run/report/", _run_page("report_page"), browser),
        _route("/run/report/{name}", _run_page("report_figure"), browser),
        _route("/s/{sid}/", tree_page, browser),
        _route("/s/{sid}/file/{path:path}", file_page, browser),
        _route("/s/{sid}/search", search_page, browser),
        _route("/s/{sid}/health", health_page, browser),
        _route("/s/{sid}/history", history_page, browser),
        _route("/s/{sid}/turn/{locator}", turn_page, browser),
        Mount("/static", StaticFiles(directory=str(files("memdir.browse") / "static")),
              name="static"),
    ]
    app: ASGIApp = Starlette(routes=routes, exception_handlers={HTTPException: error})
    bound = host.strip("[]").lower()
    app = TrustedHostMiddleware(app, allowed_hosts=[*_LOOPBACK_HOSTS, bound, f"[{bound}]"])
    return _SecurityHeaders(TokenGate(app, token) if token else app)


def serve(catalog: Catalog, *, host: str, port: int, token: str,
          ready: Callable[[str], None] | None = None) -> None:
    """Serve the browser on ``http://host:port/`` until interrupted.

    Args:
        catalog: What to show.
        host: A loopback address.
        port: The TCP port (0: any free one).
        token: The session's own secret (see :func:`browse_app`).
        ready: Called with the URL to open (token included) once the server listens.

    Raises:
        LoopbackError: ``host`` is reachable from other machines.
    """
    if not is_loopback(host):
        raise LoopbackError(f"{host} is reachable from other machines; the browser binds "
                            "loopback addresses only")
    config = uvicorn.Config(browse_app(catalog, token=token, host=host), host=host, port=port,
                            log_level="warning", lifespan="off")
    server = uvicorn.Server(config)

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.05)
                if server.should_exit:
                    return
            if ready is not None:
                bound = server.servers[0].sockets[0].getsockname()[1] if server.servers \
                    else port
                shown = f"[{host}]" if ":" in host else host
                ready(f"http://{shown}:{bound}/{token}/")

    anyio.run(run)
