"""The tenants file: which token reaches which store, with which tools, within which limits.

One HTTP server can serve a folder of stores to many clients. The tenants file
(YAML) maps each tenant to a store folder inside that folder, a tool set, read or
write access, and limits; a tenant is found by its token, which the file keeps
only as a SHA-256 hash (``memdir tenants add`` makes a token and records its
hash). For example::

    tenants:
      alice:
        token_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
        store: alice
        toolset: write
        access: write
        max_bytes: 5000000
        max_files: 2000
        calls_per_second: 5

A store name is one folder name (lowercase letters, digits, hyphens), so no
tenant's store can sit inside another's; several tenants may share a store (a
read-only token beside a writing one).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

__all__ = [
    "TENANT_TOOLSETS",
    "Tenant",
    "TenantsError",
    "add_tenant",
    "hash_token",
    "load_tenants",
    "tenant_store",
]

TENANT_TOOLSETS: Final = ("read", "write", "bm25", "bm25-write", "bm25-folder", "chunk",
                          "folder", "shell", "shell-read", "anthropic")
_NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_HEX: Final = re.compile(r"^[0-9a-f]{64}$")


class TenantsError(ValueError):
    """A tenants file that cannot be served; the message names the file and the fix."""


def hash_token(token: str) -> str:
    """The hex SHA-256 of a token, as the tenants file keeps it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Tenant:
    """One tenant: its token's hash, its store, its tools and its limits."""

    name: str
    token_sha256: str
    store: str
    toolset: str = "read"
    access: Literal["read", "write"] = "read"
    max_bytes: int = 50_000_000
    """Most bytes the store's files may hold; a write that would pass it is refused."""
    max_files: int = 10_000
    """Most files the store may hold."""
    calls_per_second: float = 10.0
    """Tool calls allowed per second (a burst of up to twice as many is let through)."""


def _model() -> Any:
    from pydantic import BaseModel, ConfigDict, Field

    class TenantEntry(BaseModel):
        model_config = ConfigDict(extra="forbid")
        token_sha256: Annotated[str, Field(pattern=_HEX.pattern)]
        store: Annotated[str, Field(pattern=_NAME.pattern)]
        toolset: Literal[TENANT_TOOLSETS] = "read"  # type: ignore[valid-type]
        access: Literal["read", "write"] = "read"
        max_bytes: Annotated[int, Field(gt=0)] = 50_000_000
        max_files: Annotated[int, Field(gt=0)] = 10_000
        calls_per_second: Annotated[float, Field(gt=0)] = 10.0

    class TenantsFile(BaseModel):
        model_config = ConfigDict(extra="forbid")
        tenants: dict[Annotated[str, Field(pattern=_NAME.pattern)], TenantEntry]

    return TenantsFile


def _read_yaml(file: Path) -> Any:
    """The tenants file as YAML data (None when empty).

    Raises:
        TenantsError: The file is unreadable or not valid YAML.
    """
    import yaml

    try:
        return yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TenantsError(f"{file}: cannot read the tenants file ({exc.strerror})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise TenantsError(f"{file}: not valid YAML ({exc}); fix or remove it.") from None


def load_tenants(path: str | os.PathLike[str]) -> list[Tenant]:
    """Read and check a tenants file.

    Raises:
        TenantsError: The file is unreadable, malformed, names no tenant, or gives
            two tenants the same token.
    """
    from pydantic import ValidationError

    file = Path(path)
    data = _read_yaml(file)
    if data is None:
        data = {"tenants": {}}
    try:
        parsed = _model().model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}"
                             for e in exc.errors())
        raise TenantsError(f"{file}: {problems}") from None
    tenants = [Tenant(name, **entry.model_dump()) for name, entry in parsed.tenants.items()]
    if not tenants:
        raise TenantsError(f"{file} names no tenant; add one with `memdir tenants add`.")
    seen: dict[str, str] = {}
    for tenant in tenants:
        if tenant.token_sha256 in seen:
            raise TenantsError(f"{file}: tenants {seen[tenant.token_sha256]} and {tenant.name} "
                               "have the same token; give each its own.")
        seen[tenant.token_sha256] = tenant.name
    return tenants


def tenant_store(stores: Path, tenant: Tenant) -> Path:
    """The folder of a tenant's store, made if missing, checked to be a plain folder there.

    Raises:
        TenantsError: The folder is a link or anything but a folder directly inside
            ``stores``.
    """
    root = Path(os.path.realpath(stores))
    folder = root / tenant.store
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise TenantsError(f"{folder} (the store of tenant {tenant.name}) is a link or a "
                           "file; a tenant's store must be a plain folder in the stores folder.")
    folder.mkdir(exist_ok=True)
    if Path(os.path.realpath(folder)).parent != root:
        raise TenantsError(f"{folder} does not resolve to a folder of {root}.")
    return folder


def add_tenant(path: str | os.PathLike[str], name: str, *, store: str, toolset: str,
               access: str, **limits: float | None) -> str:
    """Add a tenant with a new random token to the tenants file; return the token.

    The token is returned once and never stored: the file keeps its hash.

    Raises:
        TenantsError: The name is taken or invalid, or the result would not load.
    """
    import yaml

    file = Path(path)
    data: Any = (_read_yaml(file) if file.exists() else None) or {}
    if not isinstance(data, dict):
        raise TenantsError(f"{file}: the tenants file must be a mapping with a 'tenants' key.")
    tenants = data.setdefault("tenants", {})
    if not isinstance(tenants, dict):
        raise TenantsError(f"{file}: 'tenants' must be a mapping of tenant names.")
    if name in tenants:
        raise TenantsError(f"{file} already has a tenant {name}; choose another name.")
    token = secrets.token_urlsafe(32)
    tenants[name] = {"token_sha256": hash_token(token), "store": store, "toolset": toolset,
                     "access": access, **{k: v for k, v in limits.items() if v is not None}}
    text = yaml.safe_dump(data, sort_keys=False)
    scratch = file.with_name(f".{file.name}.new")
    scratch.write_text(text, encoding="utf-8")
    try:
        load_tenants(scratch)
    except TenantsError as exc:
        scratch.unlink()
        raise TenantsError(str(exc).replace(str(scratch), str(file))) from None
    os.chmod(scratch, 0o600)
    os.replace(scratch, file)
    return token
