"""The stdio server's opening, answered before the MCP SDK has loaded.

Importing the MCP SDK takes most of a second (over a second on a busy
machine), and a client that spawns ``memdir serve`` waits that long for the
answer to its first message. :class:`StdinFeed` reads standard input on its
own thread from the moment the process starts, and while the SDK and the tool
set are still loading it answers the opening itself (``initialize``, or
``server/discover``) and any ``ping``. It writes the very reply the SDK would write
(the same protocol version negotiation, against the installed SDK's own list of
versions, the same capabilities, server name, version and instructions, the
same bytes), and keeps every line it read, in order.

When the server is ready it takes the lines over (:meth:`StdinFeed.attach`):
every line read so far, those answered early included, reaches the SDK first,
in the order they came, then the ones that follow, so the SDK's state is what
it would have been had it read them itself. Its replies to the requests
answered early are not written again; each is compared with the early one, and
a difference is logged as a bug (the tests send the real clients' openings
and check that there is none).

What is answered early, and what is not:

- ``initialize`` only as the first line, with an integer id or a plain string
  id, and parameters of the plain form (``protocolVersion`` a string,
  ``capabilities`` an object of objects, ``clientInfo`` an object with string
  ``name`` and ``version``); anything else waits for the SDK.
- ``server/discover`` (the per-request protocol's opening, which the SDK's own
  client sends first) likewise, at a version the SDK serves that way.
- ``ping`` with no parameters or empty ones, before the SDK is ready.
- Nothing once the SDK has taken the lines over.

This module imports nothing of the SDK (the protocol versions are read from
its ``mcp_types/version.py`` file, plain data) and nothing of memdir's tools.
"""

from __future__ import annotations

import codecs
import importlib.util
import json
import os
import sys
import threading
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final

__all__ = ["INSTRUCTIONS", "SERVER_NAME", "StdinFeed", "early_reply", "server_version"]

SERVER_NAME: Final = "memdir"
INSTRUCTIONS: Final = (
    "A memory store of markdown files under /memories. Survey it with view on /memories "
    "(each file is listed with its description), probe with grep, and read only what you "
    "need. Cite what you use by path, e.g. [/memories/people/alice.md:L10-15]."
)
"""What the server tells a client about itself when it connects."""
_ID_CHARACTERS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _.:@/+=-")
"""The characters of string ids answered early: their JSON form is the same whichever
serializer writes it (no quotes, backslashes, control or non-ASCII characters)."""


@cache
def server_version() -> str:
    """The version of memdir the server reports ("0" where it is not installed).

    What ``importlib.metadata.version("memdir")`` says, read from the first
    ``memdir-*.dist-info`` folder on ``sys.path`` without loading
    ``importlib.metadata`` (a twentieth of a second); where there is none, or it
    reads otherwise, from ``importlib.metadata`` itself.
    """
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as found:
                names = sorted(e.name for e in found if e.name.startswith("memdir-")
                               and e.name.endswith(".dist-info"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(entry or ".", name, "METADATA"), encoding="utf-8") as f:
                    head = f.read(4096)
            except OSError:
                continue
            fields = dict(line.split(": ", 1) for line in head.split("\n")[:3] if ": " in line)
            if fields.get("Name", "").lower() == "memdir" and fields.get("Version"):
                return fields["Version"].strip()
        if names:
            break
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memdir")
    except PackageNotFoundError:
        return "0"


@cache
def _versions() -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    """The SDK's protocol versions: by ``initialize``, its latest, and per request.

    The third are those a ``server/discover`` probe reaches. Read from the SDK's
    own ``mcp_types/version.py`` without importing the ``mcp_types`` package (which
    builds every message model); where the SDK is laid out otherwise, by the
    ordinary import.
    """
    spec = importlib.util.find_spec("mcp_types")
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    if where:
        own = importlib.util.spec_from_file_location(
            "memdir._mcp_versions", os.path.join(where[0], "version.py"))
        if own is not None and own.loader is not None:
            module = importlib.util.module_from_spec(own)
            try:
                own.loader.exec_module(module)
                return (tuple(module.HANDSHAKE_PROTOCOL_VERSIONS),
                        str(module.LATEST_HANDSHAKE_VERSION),
                        tuple(module.MODERN_PROTOCOL_VERSIONS))
            except (OSError, AttributeError, SyntaxError):
                pass  # another layout: the ordinary import below
    from mcp_types.version import (
        HANDSHAKE_PROTOCOL_VERSIONS,
        LATEST_HANDSHAKE_VERSION,
        MODERN_PROTOCOL_VERSIONS,
    )

    return (tuple(HANDSHAKE_PROTOCOL_VERSIONS), str(LATEST_HANDSHAKE_VERSION),
            tuple(MODERN_PROTOCOL_VERSIONS))


def _plain_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -(2**53) < value < 2**53
    return isinstance(value, str) and 0 < len(value) <= 200 and _ID_CHARACTERS.issuperset(value)


def _plain_opening(params: object, keys: tuple[str, str, str] = (
        "protocolVersion", "capabilities", "clientInfo")) -> str | None:
    """The protocol version asked for by plain opening parameters, else None.

    Args:
        params: ``initialize``'s parameters, or ``server/discover``'s ``_meta``.
        keys: The names of the version, the capabilities and the client's name there.
    """
    if not isinstance(params, dict) or set(params) - set(keys):
        return None
    version, capabilities, client = (params.get(k) for k in keys)
    if not isinstance(version, str) or not isinstance(capabilities, dict) \
            or not isinstance(client, dict):
        return None
    if not all(isinstance(v, dict) and all(isinstance(x, bool | dict) for x in v.values())
               for v in capabilities.values()):
        return None
    if set(client) - {"name", "version", "title"} or not all(
            isinstance(client.get(k), str) for k in ("name", "version")) \
            or not isinstance(client.get("title", ""), str):
        return None
    return version


def _reply(request_id: int | str, result: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result},
                      separators=(",", ":"), ensure_ascii=False)


def early_reply(line: str, *, first: bool) -> tuple[str, str] | None:
    """The SDK's reply to ``line`` and the key of its id, where it can be given early.

    Args:
        line: One line the client sent.
        first: Whether it is the first line of the session.

    Returns:
        ``(key, reply)``, ``key`` being ``repr`` of the request's id; None for a
        line that must wait for the SDK.
    """
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" \
            or not _plain_id(message.get("id")):
        return None
    method, request_id = message.get("method"), message["id"]
    if method == "ping" and set(message) <= {"jsonrpc", "id", "method", "params"} \
            and message.get("params") in (None, {}):
        return repr(request_id), _reply(request_id, {})
    if method not in ("initialize", "server/discover") or not first \
            or set(message) != {"jsonrpc", "id", "method", "params"}:
        return None
    if method == "server/discover":
        return _discover_reply(request_id, message["params"])
    asked = _plain_opening(message["params"])
    if asked is None:
        return None
    versions, latest, _ = _versions()
    result = {
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": INSTRUCTIONS,
        "protocolVersion": asked if asked in versions else latest,
        "serverInfo": {"name": SERVER_NAME, "version": server_version()},
    }
    return repr(request_id), _reply(request_id, result)


_META: Final = "io.modelcontextprotocol/"


def _discover_reply(request_id: int | str, params: object) -> tuple[str, str] | None:
    """The SDK's answer to a plain ``server/discover`` at a version it serves, else None.

    The SDK's own client opens with this probe (its ``auto`` mode), and takes the
    answer for the whole connection: no ``initialize`` follows.
    """
    if not isinstance(params, dict) or set(params) != {"_meta"}:
        return None
    asked = _plain_opening(params["_meta"], (f"{_META}protocolVersion",
                                             f"{_META}clientCapabilities",
                                             f"{_META}clientInfo"))
    _, _, modern = _versions()
    if asked is None or asked not in modern:
        return None
    result = {
        "cacheScope": "private",
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": INSTRUCTIONS,
        "resultType": "complete",
        "supportedVersions": list(modern),
        "ttlMs": 0,
        "_meta": {f"{_META}serverInfo": {"name": SERVER_NAME, "version": server_version()}},
    }
    return repr(request_id), _reply(request_id, result)


class StdinFeed:
    """Standard input, read on a daemon thread from the start, its opening answered early.

    Until :meth:`attach`, each line is kept and, where :func:`early_reply` gives
    one, answered on standard output at once. ``answered`` maps the key of each
    request answered that way to the reply written, for the server to compare
    with its own and not write again.

    Args:
        fd: The descriptor to read (standard input).
        out: The descriptor replies go to (standard output) until :meth:`attach`.
        early: Answer what can be answered early (False: only read).
    """

    def __init__(self, fd: int = 0, out: int = 1, *, early: bool = True) -> None:
        self._fd, self._out, self._early = fd, out, early
        self._lock = threading.Lock()
        self._kept: list[str] = []
        self._deliver: Callable[[str], None] | None = None
        self._first = True
        self.answered: dict[str, str] = {}
        self._thread = threading.Thread(target=self._pump, name="memdir-stdin", daemon=True)

    def start(self) -> StdinFeed:
        """Begin reading (returns the feed)."""
        self._thread.start()
        return self

    def attach(self, deliver: Callable[[str], None]) -> None:
        """Hand every line over to ``deliver``: those read so far, then each as it comes.

        ``deliver`` is called on the reading thread (it must be thread-safe) and
        gets ``""`` once, at the end of input. From here on nothing is answered early.
        """
        with self._lock:
            self._deliver = deliver
            kept, self._kept = self._kept, []
            for line in kept:
                deliver(line)

    def _take(self, line: str) -> None:
        with self._lock:
            if self._deliver is not None:
                self._deliver(line)
                return
            self._kept.append(line)
            if not line or not self._early:
                return
            first, self._first = self._first, False
            found = early_reply(line, first=first)
            if found is None:
                return
            key, reply = found
            if key in self.answered:
                return  # a second request with that id: the SDK answers it
            try:
                _write_all(self._out, (reply + "\n").encode("utf-8"))
            except OSError:
                return  # the client went away: the server sees the end of input
            self.answered[key] = reply

    def _pump(self) -> None:
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        pending = ""
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except OSError:
                data = b""  # stdin closed or broken: the same as its end
            pending += decode(data, final=not data)
            *complete, pending = pending.split("\n")
            batch = [line + "\n" for line in complete]
            if not data:
                batch += [pending, ""] if pending else [""]
            try:
                for line in batch:
                    self._take(line)
            except RuntimeError:
                return  # the server's loop is gone
            if not data:
                return


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
