"""The state one browser session shares between its pages: what is shown, templates, caches.

Caches hold only derived views (a health report, a history's growth table, file
versions read from git) keyed by what they were derived from, so a page never
shows a stale view of a store that changed underneath it.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse

from memdir.browse._sources import BrowsedStore, Catalog
from memdir.store import ROOT

__all__ = ["Browser", "fingerprint", "human_bytes"]

T = TypeVar("T")
_SURROGATE = re.compile("[\udc80-\udcff]")


def human_bytes(size: int | float) -> str:
    """``1,155 B``, ``12.4 KB``, ``3.1 MB``."""
    if size < 10_000:
        return f"{int(size):,} B"
    if size < 10_000_000:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


class _Lru:
    """A small thread-safe least-recently-used cache."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def has(self, key: Any) -> bool:
        with self._lock:
            return key in self._items

    def peek(self, key: Any) -> Any:
        with self._lock:
            return self._items.get(key)

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def get(self, key: Any, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                found: T = self._items[key]
                return found
        value = make()
        self.put(key, value)
        return value


class Browser:
    """The catalog being browsed, the page templates and the derived-view caches.

    Args:
        catalog: What this session shows.
        base: The path every URL of the session starts with (``/TOKEN``; empty when
            no token gates it).
    """

    def __init__(self, catalog: Catalog, base: str = "") -> None:
        self.catalog = catalog
        self.base = base
        self.env = Environment(
            loader=PackageLoader("memdir.browse", "templates"),
            autoescape=select_autoescape(["html"]),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["bytes"] = human_bytes
        self.env.globals["catalog"] = catalog
        self.env.globals["file_url"] = self.file_url
        self.env.globals["store_url"] = self.store_url
        self.env.globals["history_url"] = self.history_url
        self.env.globals["url"] = self.url
        self.env.globals["ROOT"] = ROOT
        self.cache = _Lru(64)
        self.texts = _Lru(20_000)
        self.outlines = _Lru(20_000)

    def page(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        r"""Render a template into a response.

        A file name that is not UTF-8 reaches the page as lone surrogates (Python's
        ``surrogateescape``); each is shown as the byte it stands for (``\xff``).
        """
        html = self.env.get_template(template).render(**context)
        html = _SURROGATE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", html)
        return HTMLResponse(html, status_code=status_code)

    def store(self, sid: str) -> BrowsedStore:
        """The store with this id, or a 404 naming the ones there are."""
        found = self.catalog.stores.get(sid)
        if found is None:
            known = ", ".join(sorted(self.catalog.stores)) or "none"
            raise HTTPException(404, f"no store {sid!r} in this session (stores: {known})")
        return found

    # -- URLs ------------------------------------------------------------------

    def url(self, path: str) -> str:
        """A path of this session (``/s/store/health``) as a URL the token gate admits."""
        return self.base + path

    def store_url(self, sid: str, **query: Any) -> str:
        """The tree page of a store."""
        return self.url(f"/s/{quote(sid)}/" + _query(query))

    def file_url(self, sid: str, path: str, *, lines: tuple[int, int] | None = None,
                 step: int | None = None, view: str | None = None) -> str:
        """A file's page, opened at ``lines`` (highlighted) and as of ``step`` if given."""
        rel = path.removeprefix(ROOT).lstrip("/")
        query: dict[str, Any] = {"step": step, "view": view}
        anchor = ""
        if lines is not None:
            query["lines"] = f"{lines[0]}-{lines[1]}"
            anchor = f"#L{lines[0]}"
        # A name that is not UTF-8 (lint names such files) keeps its raw bytes, %-escaped.
        rel = quote(rel, errors="surrogateescape")
        return self.url(f"/s/{quote(sid)}/file/{rel}" + _query(query) + anchor)

    def history_url(self, sid: str, step: int | None = None, under: str | None = None) -> str:
        """The history page of a store, at ``step`` and showing folder ``under`` if given."""
        return self.url(f"/s/{quote(sid)}/history" + _query({"step": step, "under": under}))

    def turn_url(self, sid: str, locator: str) -> str:
        """The page of a conversation turn."""
        return self.url(f"/s/{quote(sid)}/turn/{quote(locator)}#{quote(locator)}")


def _query(values: dict[str, Any]) -> str:
    kept = {k: v for k, v in values.items() if v is not None and v != ""}
    return "?" + urlencode(kept) if kept else ""


def fingerprint(entry: BrowsedStore) -> str:
    """A digest of every entry's path, kind, size and mtime: it changes when the store does.

    It reads the store's own walk (entries as they are, links never followed), so a
    dangling or looping link, or a name that is not UTF-8, is one more entry to
    count, not a failure.

    Raises:
        StoreError: The store's root cannot be read.
    """
    digest = hashlib.sha256()
    for node in entry.store.tree():
        name = "/".join(node.parts).encode("utf-8", "surrogateescape")
        digest.update(name + f"\0{node.kind}\0{node.size}\0{node.mtime_ns}\n".encode())
    return digest.hexdigest()
