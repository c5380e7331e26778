"""The store view: the tree, a file, search, the health page and a conversation turn."""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import unquote_to_bytes, urlencode

import anyio
from markupsafe import Markup, escape
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

from memdir.browse._checks import INLINE_CHECK_FILES, checks_for
from memdir.browse._context import Browser
from memdir.browse._render import LinkResolver, render_body, render_lines
from memdir.browse._sources import BrowsedStore
from memdir.browse._state import StoreState, history_steps, parent_folders, state_of
from memdir.browse._tree import FILES_SHOWN, HEADINGS_FILES, build_nodes
from memdir.store import ROOT, Document, Finding, Store, StoreError, find_blocks
from memdir.store.history import HistoryError
from memdir.tools import bm25_set, read_set
from memdir.tools._grep import GREP_HIT
from memdir.tools._ranked import RANKED_FILE, RANKED_LINE

__all__ = ["file_page", "health_page", "search_page", "tree_page", "turn_page"]

_log = logging.getLogger(__name__)



def _entry_and_state(browser: Browser, request: Request) -> tuple[BrowsedStore, StoreState]:
    entry = browser.store(request.path_params["sid"])
    try:
        return entry, state_of(browser, entry, request.query_params.get("step"))
    except HistoryError as exc:
        raise HTTPException(404, str(exc)) from None


def tree_page(browser: Browser, request: Request) -> HTMLResponse:
    """The taxonomy tree with descriptions, sizes and headings; ``?q=`` filters it."""
    entry, state = _entry_and_state(browser, request)
    needle = request.query_params.get("q", "")
    under = request.query_params.get("under", ROOT)
    try:
        under = entry.store.resolve(under, "dir").virtual
    except StoreError as exc:
        raise HTTPException(404, str(exc)) from None
    root, shown = build_nodes(state, needle, under)
    checks = checks_for(browser, entry, files=shown if under == ROOT and not needle else None)
    return browser.page(
        "tree.html", entry=entry, state=state, root=root, shown=shown, needle=needle,
        flagged=checks.flagged() if checks else {}, checks=checks, under=under,
        conflicted=checks.conflicted() if checks else set(),
        headings_limit=HEADINGS_FILES, files_shown=FILES_SHOWN,
        steps=len(history_steps(browser, entry)),
        open_all=shown <= HEADINGS_FILES or bool(needle),
        folders=parent_folders(under + "/x") if under != ROOT else [],
        open_url=lambda folder: browser.store_url(entry.id, under=folder, q=needle or None),
    )


def _lines(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", value)
    if match is None:
        raise HTTPException(400, f"lines={value!r}: give a line or a range such as 12-18")
    start = int(match.group(1))
    end = int(match.group(2) or start)
    return (start, end) if start <= end else (end, start)


def _file_findings(state: StoreState, path: str, dangling: list[tuple[int, str]]
                   ) -> list[Finding]:
    doc = state.document(path)
    found = [Finding(path, d.code, d.message, d.line, d.fixable)
             for d in (doc.defects if doc is not None else [])]
    found += [Finding(path, "dangling-reference", f"cross-reference {problem}", line)
              for line, problem in dangling]
    if path in state.problems:
        found.append(Finding(path, "unreadable", f"{state.problems[path]} It is shown with "
                             "each byte that is not UTF-8 as \ufffd; rewrite it as UTF-8."))
    return sorted(found, key=lambda f: (f.line or 0, f.code))


def _rendered(doc: Document, links: LinkResolver, view: str
              ) -> tuple[Markup | None, list[tuple[int, Markup, bool]] | None, Finding | None]:
    """The body as HTML (or numbered lines); a file that breaks the renderer gets a finding.

    The page then shows its numbered source as plain text instead, so a file is never
    the reason its page fails.
    """
    try:
        if view == "lines":
            return None, render_lines(doc.text, links), None
        return (render_body(doc.body, doc.body_line, links, find_blocks(doc.text)),
                None, None)
    except Exception as exc:  # any content that breaks a renderer: shown, and logged
        _log.exception("rendering %s failed", doc.path)
        plain = [(n, Markup(escape(line)), False)
                 for n, line in enumerate(doc.text.split("\n"), start=1)]
        return None, plain, Finding(doc.path, "render-failed", f"this file could not be "
                                    f"rendered ({type(exc).__name__}: {exc}); its source is "
                                    "shown as plain text", None)


def _requested(request: Request) -> str:
    """The file path of a file page's URL, bytes that are not UTF-8 kept (as surrogates).

    The decoded path would turn such a byte (``%FF``) into U+FFFD and name no file,
    so it is read again from the raw path.
    """
    raw: bytes | None = request.scope.get("raw_path")
    if raw and b"/file/" in raw:
        return os.fsdecode(unquote_to_bytes(raw.split(b"/file/", 1)[1]))
    path: str = request.path_params["path"]
    return path


def _not_a_memory(browser: Browser, entry: BrowsedStore, path: str, problem: str) -> str:
    """Why ``path`` has no page, with what lint says of the entry there (a link, a bad name)."""
    checks = checks_for(browser, entry)
    said = [f"{f.code}: {f.message}" for f in (checks.findings if checks else [])
            if f.path == path]
    return " ".join([problem, *said]) if said else problem


def file_page(browser: Browser, request: Request) -> HTMLResponse:
    """A file: frontmatter apart, body rendered (or numbered), references and locators linked.

    ``?lines=A-B`` marks the cited lines and ``?view=lines`` shows the numbered source.
    """
    entry, state = _entry_and_state(browser, request)
    path = f"{ROOT}/{_requested(request)}".rstrip("/")
    try:
        path = entry.store.resolve(path, "file").virtual
    except StoreError as exc:
        raise HTTPException(404, _not_a_memory(browser, entry, path, str(exc))) from None
    doc = state.document(path)
    if doc is None:
        where = f"step {state.step.index}" if state.step else "the store"
        problem = f"{path} is not in {where}; open the tree to see what is."
        raise HTTPException(404, problem if state.step else _not_a_memory(
            browser, entry, path, problem))
    highlight = _lines(request.query_params.get("lines"))
    links = state.resolver((highlight,) if highlight else ())
    dangling = [(ref.line, links.xref(ref).problem or "") for ref in doc.xrefs
                if links.xref(ref).url is None]
    view = request.query_params.get("view", "rendered")
    header_lines = doc.text.split("\n")[: doc.body_line - 1]
    checks = checks_for(browser, entry) if state.step is None else None
    _, conversation_problem = entry.conversation()
    body, lines, failed = _rendered(doc, links, view)
    findings = _file_findings(state, path, dangling) + ([failed] if failed else [])
    return browser.page(
        "file.html", entry=entry, state=state, path=path, doc=doc,
        view="lines" if lines is not None else view,
        header="\n".join(header_lines), highlight=highlight, body=body, lines=lines,
        findings=findings,
        alarms=checks.alarms_of(path) if checks else [],
        checks_pending=checks is None and state.step is None,
        folders=parent_folders(path), conversation_problem=conversation_problem,
        size=len(doc.text.encode("utf-8")),
        # a past state's "now" link only where the file is still in the store
        exists_now=state.step is None or _is_live_file(entry.store, path),
        conflicts=find_blocks(doc.text),  # a sync's two versions, shown side by side
    )


def _is_live_file(store: Store, path: str) -> bool:
    try:
        return store.kind(path) == "file"
    except StoreError:
        return False


def _link_output(browser: Browser, sid: str, text: str, mode: str) -> Markup:
    """A tool's text output with every path and line number linked to the file."""
    out: list[str] = []
    current: str | None = None
    for line in text.split("\n"):
        if mode == "grep" and (hit := GREP_HIT.match(line)):
            url = browser.file_url(sid, hit["path"], lines=(int(hit["line"]),) * 2)
            out.append(f'<a href="{escape(url)}">{escape(line[:hit.end("line")])}</a>: '
                       f"{escape(hit['text'])}")
        elif mode == "ranked" and (hit := RANKED_FILE.match(line)):
            current = hit["path"]
            url = browser.file_url(sid, current)
            out.append(f"{escape(line[:hit.start('path')])}<a href=\"{escape(url)}\">"
                       f"{escape(current)}</a>{escape(line[hit.end('path'):])}")
        elif mode == "ranked" and current and (hit := RANKED_LINE.match(line)):
            number = int(hit["line"])
            url = browser.file_url(sid, current, lines=(number, number))
            out.append(f'   <a href="{escape(url)}">L{number}</a>{escape(line[hit.end("line"):])}')
        else:
            out.append(str(escape(line)))
    return Markup("\n".join(out))


async def search_page(browser: Browser, request: Request) -> HTMLResponse:
    """Grep or BM25 search over the live store, shown as the tool shows it to a model."""
    entry = browser.store(request.path_params["sid"])
    query = request.query_params.get("q", "")
    mode = request.query_params.get("mode", "grep")
    if mode not in ("grep", "ranked"):
        raise HTTPException(400, f"mode={mode!r}: use grep or ranked")
    ignore_case = request.query_params.get("i", "") not in ("", "0")
    output: Markup | None = None
    failed = False
    if query:
        key = ("toolset", entry.id, mode)
        if mode == "grep":
            toolset = browser.cache.get(key, lambda: read_set(entry.store))
            args: dict[str, Any] = {"pattern": query, "ignore_case": ignore_case,
                                    "max_results": 200}
            result = await toolset.call("grep", args)
        else:
            toolset = browser.cache.get(key, lambda: bm25_set(entry.store))
            result = await toolset.call("search", {"query": query, "k": 20})
        failed = result.is_error
        output = _link_output(browser, entry.id, result.content, mode)
    return browser.page("search.html", entry=entry, query=query, mode=mode,
                        ignore_case=ignore_case, output=output, failed=failed)


HEALTH_ROWS = 200
"""Lint defects and alarms listed per health page; ``?page=`` shows the next ones."""


def _pager(total: int, page: int, kind: str) -> dict[str, Any]:
    """Which rows a page shows and the links to its neighbours (relative query URLs)."""
    pages = max(1, -(-total // HEALTH_ROWS))
    page = min(max(page, 1), pages)

    def link(number: int) -> str:
        return "?" + urlencode({k: v for k, v in (("kind", kind), ("page", number)) if v})

    return {"page": page, "pages": pages, "start": (page - 1) * HEALTH_ROWS,
            "stop": min(page * HEALTH_ROWS, total), "total": total,
            "previous": link(page - 1) if page > 1 else None,
            "next": link(page + 1) if page < pages else None}


def health_page(browser: Browser, request: Request) -> HTMLResponse:
    """The lint defects and health alarms of the live store, each linking to its file.

    Paged: :data:`HEALTH_ROWS` of each per page (``?page=N``), with the alarms
    counted by kind and ``?kind=`` showing one kind only, so the page stays small
    however many alarms a large store raises.
    """
    entry = browser.store(request.path_params["sid"])
    checks = checks_for(browser, entry, force=True)
    assert checks is not None
    kind = request.query_params.get("kind", "")
    try:
        page = int(request.query_params.get("page", "1"))
    except ValueError:
        raise HTTPException(400, "page= takes a page number such as 2") from None
    counts: dict[str, int] = {}
    for alarm in checks.alarms:
        counts[alarm.kind] = counts.get(alarm.kind, 0) + 1
    if kind and kind not in counts:
        raise HTTPException(404, f"no {kind!r} alarm; the kinds raised are: "
                                 f"{', '.join(counts) or 'none'}")
    alarms = [a for a in checks.alarms if not kind or a.kind == kind]
    findings = [] if kind else checks.findings
    pager = _pager(max(len(alarms), len(findings)), page, kind)
    return browser.page("health.html", entry=entry, checks=checks, kind=kind, counts=counts,
                        alarms=alarms[pager["start"]:pager["stop"]], all_alarms=len(alarms),
                        findings=findings[pager["start"]:pager["stop"]],
                        all_findings=len(findings), pager=pager, rows=HEALTH_ROWS,
                        inline_limit=INLINE_CHECK_FILES)


async def turn_page(browser: Browser, request: Request) -> HTMLResponse:
    """A turn within its session, and the store lines that cite it (found by the grep tool)."""
    entry = browser.store(request.path_params["sid"])
    locator = request.path_params["locator"].strip("[]")
    conversation, problem = await anyio.to_thread.run_sync(entry.conversation)
    if conversation is None:
        raise HTTPException(404, f"{locator}: {problem}; browse the store with "
                                 "--conversation to link its locators")
    try:
        turn = conversation.turn(locator)
    except KeyError as exc:
        raise HTTPException(404, str(exc).strip("'\"")) from None
    session = next(s for s in conversation.sessions if turn in s.turns)
    toolset = browser.cache.get(("toolset", entry.id, "grep"), lambda: read_set(entry.store))
    found = await toolset.call("grep", {"pattern": rf"\b{locator}\b", "max_results": 50})
    return browser.page("turn.html", entry=entry, conversation=conversation, session=session,
                        turn=turn, cited_by=_link_output(browser, entry.id, found.content,
                                                         "grep"))
