"""One state of a store to show: the live files, or a snapshot of its history.

A snapshot is read from git blob by blob (each version once, cached by blob id),
never checked out, so browsing a history leaves the store untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, partial

from memdir.browse._context import Browser
from memdir.browse._render import Linked, LinkResolver
from memdir.browse._sources import BrowsedStore
from memdir.store import (
    ROOT,
    Document,
    Heading,
    StoreError,
    XRef,
    digest_text,
    find_section,
    parse_document,
)
from memdir.store.history import History, HistoryError, Step

__all__ = ["StoreState", "history_steps", "state_of"]


def history_steps(browser: Browser, entry: BrowsedStore) -> list[Step]:
    """The store's snapshots, oldest first (none when it keeps no history)."""
    history = History(entry.store)
    if not history.initialized:
        return []
    return history.steps()


@dataclass
class StoreState:
    """The files of a store as they are now (``step`` None) or as of a snapshot."""

    browser: Browser
    entry: BrowsedStore
    step: Step | None = None
    problems: dict[str, str] = field(default_factory=dict)
    """Why a file read here could not be read as it is (it is shown decoded anyway)."""

    @cached_property
    def _blobs(self) -> dict[str, str] | None:
        if self.step is None:
            return None
        return {p: b for p, b in History(self.entry.store).blobs(self.step).items()
                if p.endswith(".md")}

    def files(self) -> list[str]:
        """Every markdown file's agent path, sorted."""
        if self._blobs is None:
            return self.entry.store.files()
        return sorted(self._blobs)

    def sizes(self) -> dict[str, int]:
        """Every file's size in bytes."""
        if self._blobs is None:
            return {e.path: e.size for e in self.entry.store.walk(describe=False)
                    if not e.is_dir}
        texts = self.read_all()
        return {p: len(t.encode("utf-8")) for p, t in texts.items()}

    def read_all(self) -> dict[str, str]:
        """Every file's text (a snapshot's, read in one git process for the uncached)."""
        if self._blobs is None:
            return {p: self.entry.store.read(p) for p in self.files()}
        blobs = self._blobs
        found = {b: t for b in blobs.values() if (t := self.browser.texts.peek(b)) is not None}
        missing = [b for b in blobs.values() if b not in found]
        for blob, data in History(self.entry.store).read_blobs(missing).items():
            found[blob] = data.decode("utf-8", errors="replace")
            self.browser.texts.put(blob, found[blob])
        return {p: found[b] for p, b in blobs.items()}

    def _fetch(self, blob: str) -> str:
        data = History(self.entry.store).read_blobs([blob])[blob]
        return data.decode("utf-8", errors="replace")

    def read(self, path: str) -> str | None:
        """One file's text, or None when the state has no such file."""
        if self._blobs is None:
            try:
                return self.entry.store.read(path)
            except StoreError as exc:
                try:  # not UTF-8: shown with each bad byte replaced, and said so
                    data = self.entry.store.read_bytes(path)
                except StoreError:
                    return None
                self.problems[path] = str(exc)
                return data.decode("utf-8", errors="replace")
        blob = self._blobs.get(path)
        if blob is None:
            return None
        return self.browser.texts.get(blob, partial(self._fetch, blob))

    def outline(self, path: str) -> tuple[str | None, list[Heading]]:
        """A file's description and headings, parsed once per distinct text."""
        text = self.read(path)
        if text is None:
            return None, []

        def parse() -> tuple[str | None, list[Heading]]:
            doc = parse_document(path, text)
            return doc.description or None, doc.headings

        found: tuple[str | None, list[Heading]] = self.browser.outlines.get(
            digest_text(text), parse)
        return found

    def document(self, path: str) -> Document | None:
        """One file parsed, or None when the state has no such file."""
        text = self.read(path)
        return None if text is None else parse_document(path, text)

    def resolver(self, highlight: tuple[tuple[int, int], ...] = ()) -> LinkResolver:
        """Links for a page of this state: references to their sections, locators to turns."""
        cache: dict[str, Document | None] = {}
        step = self.step.index if self.step is not None else None
        sid = self.entry.id

        def xref(ref: XRef) -> Linked:
            if ref.target not in cache:
                cache[ref.target] = self.document(ref.target)
            doc = cache[ref.target]
            if doc is None:
                return Linked(None, f"{ref.target} does not exist")
            line = None
            if ref.section:
                try:
                    line = find_section(doc.body, ref.section, doc.body_line).start
                except LookupError:
                    return Linked(None, f"{ref.target} has no section "
                                        f"{' > '.join(ref.section)}")
            lines = (line, line) if line is not None else None
            return Linked(self.browser.file_url(sid, ref.target, lines=lines, step=step))

        conversation, _ = self.entry.conversation()
        known = conversation.locators() if conversation is not None else set()

        def locator(name: str) -> str | None:
            return self.browser.turn_url(sid, name) if name in known else None

        return LinkResolver(xref, locator, highlight)


def state_of(browser: Browser, entry: BrowsedStore, step: str | None) -> StoreState:
    """The state a page asks for with ``?step=N`` (the live store when absent).

    Raises:
        HistoryError: The store keeps no history, or has no such step.
    """
    if step is None or step == "":
        return StoreState(browser, entry)
    history = History(entry.store)
    if not history.initialized:
        raise HistoryError(f"{entry.title} keeps no history; open it without ?step")
    return StoreState(browser, entry, history.step(step))


def parent_folders(path: str) -> list[str]:
    """The folders above a file, outermost first, without the root."""
    parts = path.removeprefix(ROOT + "/").split("/")[:-1]
    return [ROOT + "/" + "/".join(parts[: i + 1]) for i in range(len(parts))]
