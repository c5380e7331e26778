"""The MCP server: a store's tool set offered to any MCP client.

``memdir serve`` runs it; :func:`build_server` gives the server object to
embed it elsewhere. Transports: stdio, and streamable HTTP bound to loopback
with an optional bearer token; over HTTP one server may also serve a folder of
stores to many tenants, each found by its token (:func:`tenants_app`).
"""

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
from memdir.server._transports import (
    MCP_PATH,
    BearerTokenGate,
    LoopbackError,
    allowed_hosts,
    check_bind,
    http_app,
    is_loopback,
    run_http,
    run_stdio,
)

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
