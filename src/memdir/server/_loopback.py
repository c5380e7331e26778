"""Which addresses a memdir server may bind, and which Host headers reach it.

Kept apart from the transports (and the MCP SDK they load) so the browser and the
command line can check an address without loading the SDK.
"""

from __future__ import annotations

import ipaddress

__all__ = ["LoopbackError", "allowed_hosts", "bare_host", "check_bind", "is_loopback"]

_LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


class LoopbackError(ValueError):
    """A host that is reachable from other machines was given without consent."""


def bare_host(host: str) -> str:
    """``host`` without the brackets of an IPv6 literal (``[::1]`` -> ``::1``)."""
    return host.strip("[]")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1 or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare_host(host)).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> list[str] | None:
    """The ``Host`` header values a request to a server bound at ``host:port`` may carry.

    The bound address itself with the port (IPv6 in brackets), and for the usual
    names of this machine (127.0.0.1, localhost, ::1) each of the others too.
    None for a wildcard address (``0.0.0.0``, ``::``), which any name can reach;
    such a server needs a token instead.
    """
    bare = bare_host(host)
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        names = [bare]
    else:
        if address.is_unspecified:
            return None
        names = [f"[{address}]" if address.version == 6 else str(address)]
    if names[0] in _LOCAL_NAMES:
        names = [names[0], *(n for n in _LOCAL_NAMES if n != names[0])]
    hosts = [f"{name}:{port}" for name in names]
    return hosts + names if port == 80 else hosts


def check_bind(host: str, *, token: str | None, allow_remote: bool) -> None:
    """Refuse a bind address the options do not allow.

    Raises:
        LoopbackError: Why, in one sentence.
    """
    if is_loopback(host):
        return
    if not allow_remote:
        raise LoopbackError(
            f"{host} is reachable from other machines; the server binds loopback addresses "
            "only unless remote access is allowed explicitly"
        )
    if not token:
        raise LoopbackError(
            f"binding {host} lets other machines reach the store, so a bearer token is "
            "required (MEMDIR_MCP_TOKEN or --token)"
        )
