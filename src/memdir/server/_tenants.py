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

A server does not parse the file at each start: :class:`TenantIndex` keeps it
indexed by token hash in a small SQLite file beside it (``.FILE.index``), checked
against the file's SHA-256, so start-up reads the file's bytes and opens the
index, whatever the number of tenants. The index is rebuilt (the file parsed and
checked once) when the file changes, also while the server runs: a stat of the
file every few seconds notices an edit, and the new tenants are served once the
new index is made (the old ones meanwhile; a file that no longer loads keeps the
old ones, with an error in the log).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import secrets
import sqlite3
import tempfile
import threading
import time
import urllib.request
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Annotated, Any, Final, Literal

__all__ = [
    "TENANT_TOOLSETS",
    "Tenant",
    "TenantIndex",
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
_INDEX_VERSION: Final = "1"
"""Bumped when the index's tables change: an index of another version is rebuilt."""
_LOG = logging.getLogger(__name__)


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

    # libyaml's parser where PyYAML has it: the same documents, several times faster.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(file.read_bytes().decode("utf-8"), Loader=loader)  # noqa: S506
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


def index_path(path: str | os.PathLike[str]) -> Path:
    """Where :class:`TenantIndex` keeps the index of the tenants file ``path``."""
    file = Path(path)
    return file.with_name(f".{file.name}.index")


_COLUMNS: Final = tuple(f.name for f in fields(Tenant))


class TenantIndex:
    """A tenants file looked up by token hash, without parsing it at each start.

    The index is a SQLite file beside the tenants file (:func:`index_path`) that
    holds every tenant and the SHA-256 of the file it was made from. Opening
    reads the file's bytes (to hash them) and the index's header; a lookup is
    one query. When the hash differs (no index yet, or the file changed), the
    file is parsed and checked as :func:`load_tenants` does and a new index is
    written (atomically; where the folder cannot be written, it is kept in
    memory). While serving, :meth:`get` stats the file at most every
    ``check_seconds`` and, when it changed, rebuilds the index on a thread and
    swaps it in once made.

    Args:
        path: The tenants file.
        check_seconds: Least seconds between two checks of the file for edits.

    Raises:
        TenantsError: As :func:`load_tenants`, when the file must be parsed.
    """

    def __init__(self, path: str | os.PathLike[str], *, check_seconds: float = 2.0) -> None:
        self.path = Path(path)
        self.check_seconds = check_seconds
        self.builds = 0
        """Times the file was parsed to make an index (0: an index made earlier was used)."""
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._signature: tuple[int, ...] | None = None
        self._checked = time.monotonic()
        self._rebuilding: threading.Thread | None = None
        self._open()

    # -- reading -------------------------------------------------------------------

    def get(self, digest: str) -> Tenant | None:
        """The tenant whose token hashes to ``digest`` (hex SHA-256), or None."""
        self._maybe_reload()
        with self._lock:
            assert self._db is not None
            row = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM tenants "  # noqa: S608
                                   "WHERE token_sha256 = ?", (digest,)).fetchone()
        return None if row is None else Tenant(*row)

    @property
    def count(self) -> int:
        """How many tenants the file names."""
        return int(self._meta("tenants"))

    @property
    def stores(self) -> int:
        """How many store folders the tenants use."""
        return int(self._meta("stores"))

    def __len__(self) -> int:
        return self.count

    def close(self) -> None:
        """Close the index (later lookups fail)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _meta(self, key: str) -> str:
        with self._lock:
            assert self._db is not None
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else "0"

    # -- building ------------------------------------------------------------------

    def reload(self) -> bool:
        """Check the file now and rebuild the index if it changed; whether it did.

        Raises:
            TenantsError: The changed file does not load (the old index stays).
        """
        signature = self._stat()
        if signature == self._signature:
            return False
        data, digest = self._read()
        with self._lock:
            assert self._db is not None
            same = _header(self._db, "sha256") == digest
        if same:
            self._signature = signature
            return False
        db = self._build(data, digest)
        with self._lock:
            old, self._db = self._db, db
            self._signature = signature
        old.close()
        return True

    def _maybe_reload(self) -> None:
        now = time.monotonic()
        if now - self._checked < self.check_seconds:
            return
        self._checked = now
        if self._rebuilding is not None and self._rebuilding.is_alive():
            return
        try:
            if self._stat() == self._signature:
                return
        except TenantsError:
            return  # gone for now (being replaced): the old tenants stay
        self._rebuilding = threading.Thread(target=self._reload_logged,
                                            name="memdir-tenants-reload", daemon=True)
        self._rebuilding.start()

    def _reload_logged(self) -> None:
        try:
            if self.reload():
                _LOG.warning("memdir serve: %s changed; now serving its %d tenant(s).",
                             self.path, self.count)
        except TenantsError as exc:
            self._signature = self._stat_or_none()  # not retried until it changes again
            _LOG.error("memdir serve: %s changed but does not load, so the tenants it named "
                       "before are still served: %s", self.path, exc)

    def _open(self) -> None:
        self._signature = self._stat()
        data, digest = self._read()
        found = index_path(self.path)
        with contextlib.suppress(sqlite3.Error, OSError):
            if found.is_file() and not found.is_symlink():
                db = _read_only(found)
                try:
                    if _header(db, "version") == _INDEX_VERSION and \
                            _header(db, "sha256") == digest:
                        self._db = db
                        return
                except sqlite3.Error:
                    pass
                db.close()
        self._db = self._build(data, digest)

    def _stat(self) -> tuple[int, ...]:
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise TenantsError(f"{self.path}: cannot read the tenants file "
                               f"({exc.strerror})") from None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _stat_or_none(self) -> tuple[int, ...] | None:
        try:
            return self._stat()
        except TenantsError:
            return None

    def _read(self) -> tuple[bytes, str]:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise TenantsError(f"{self.path}: cannot read the tenants file "
                               f"({exc.strerror})") from None
        return data, hashlib.sha256(data).hexdigest()

    def _build(self, data: bytes, digest: str) -> sqlite3.Connection:
        """Parse the file's bytes ``data`` and write its index; the index, opened."""
        with tempfile.TemporaryDirectory(prefix="memdir-tenants-") as scratch:
            copy = Path(scratch) / self.path.name
            copy.write_bytes(data)  # parsed from the bytes hashed, whatever comes next
            try:
                tenants = load_tenants(copy)
            except TenantsError as exc:
                raise TenantsError(str(exc).replace(str(copy), str(self.path))) from None
        self.builds += 1
        target = index_path(self.path)
        made: Path | None = None
        try:
            fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".part",
                                        dir=self.path.parent)
            os.close(fd)
            made = Path(name)
            db = sqlite3.connect(made, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            _LOG.warning("memdir: cannot write the tenants index beside %s (%s); keeping it "
                         "in memory, so each start parses the file.", self.path, exc)
            if made is not None:
                made.unlink(missing_ok=True)
            made = None
            db = sqlite3.connect(":memory:", check_same_thread=False)
        _fill(db, tenants, digest)
        if made is None:
            return db
        db.close()
        os.chmod(made, 0o600)
        os.replace(made, target)
        return _read_only(target)


def _read_only(path: Path) -> sqlite3.Connection:
    url = f"file:{urllib.request.pathname2url(str(path.absolute()))}?mode=ro"
    return sqlite3.connect(url, uri=True, check_same_thread=False)


def _header(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _fill(db: sqlite3.Connection, tenants: list[Tenant], digest: str) -> None:
    with db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("CREATE TABLE tenants (name TEXT NOT NULL, token_sha256 TEXT PRIMARY KEY, "
                   "store TEXT NOT NULL, toolset TEXT NOT NULL, access TEXT NOT NULL, "
                   "max_bytes INTEGER NOT NULL, max_files INTEGER NOT NULL, "
                   "calls_per_second REAL NOT NULL) WITHOUT ROWID")
        db.executemany("INSERT INTO tenants VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       [astuple(t) for t in tenants])
        db.executemany("INSERT INTO meta VALUES (?, ?)", [
            ("version", _INDEX_VERSION), ("sha256", digest), ("tenants", str(len(tenants))),
            ("stores", str(len({t.store for t in tenants})))])
