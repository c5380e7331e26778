"""The MCP server: a store's tool set offered to any MCP client.

``memdir serve`` runs it; :func:`build_server` gives the server object to
embed it elsewhere. Transports: stdio, and streamable HTTP bound to loopback
with an optional bearer token; over HTTP one server may also serve a folder of
stores to many tenants, each found by its token (:func:`tenants_app`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir._lazy import lazy_exports

if TYPE_CHECKING:
    from memdir.server._loopback import LoopbackError, allowed_hosts, check_bind, is_loopback
    from memdir.server._server import SERVER_NAME, build_server, tool_annotations, tool_declarations
    from memdir.server._tenant_app import TenantToolSet, run_tenants, tenant_toolset, tenants_app
    from memdir.server._tenants import (
        TENANT_TOOLSETS,
        Tenant,
        TenantIndex,
        TenantsError,
        add_tenant,
        hash_token,
        load_tenants,
        tenant_store,
    )
    from memdir.server._transports import MCP_PATH, BearerTokenGate, http_app, run_http, run_stdio

_HOMES = {
    "SERVER_NAME": "_server", "build_server": "_server", "tool_annotations": "_server",
    "tool_declarations": "_server",
    "TenantToolSet": "_tenant_app", "run_tenants": "_tenant_app",
    "tenant_toolset": "_tenant_app", "tenants_app": "_tenant_app",
    "TENANT_TOOLSETS": "_tenants", "Tenant": "_tenants", "TenantIndex": "_tenants",
    "TenantsError": "_tenants",
    "add_tenant": "_tenants", "hash_token": "_tenants", "load_tenants": "_tenants",
    "tenant_store": "_tenants",
    "MCP_PATH": "_transports", "BearerTokenGate": "_transports",
    "LoopbackError": "_loopback", "allowed_hosts": "_loopback",
    "check_bind": "_loopback", "http_app": "_transports", "is_loopback": "_loopback",
    "run_http": "_transports", "run_stdio": "_transports",
}
"""Where each public name lives: the MCP SDK loads (most of a second) only when one is used,
so a light submodule (:mod:`memdir.server._handshake`) imports without it."""


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)


__all__ = [
    "MCP_PATH",
    "SERVER_NAME",
    "TENANT_TOOLSETS",
    "BearerTokenGate",
    "LoopbackError",
    "Tenant",
    "TenantIndex",
    "TenantToolSet",
    "TenantsError",
    "add_tenant",
    "allowed_hosts",
    "build_server",
    "check_bind",
    "hash_token",
    "http_app",
    "is_loopback",
    "load_tenants",
    "run_http",
    "run_stdio",
    "run_tenants",
    "tenant_store",
    "tenant_toolset",
    "tenants_app",
    "tool_annotations",
    "tool_declarations",
]
