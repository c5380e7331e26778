"""Lint defects and health alarms of a store, each tied to the file (and line) it concerns.

Both are store-wide computations, cached under the store's fingerprint. Stores of
up to :data:`INLINE_CHECK_FILES` files are checked whenever a page needs it;
larger ones only on the health page, after which every page shows the results.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.browse._context import Browser, fingerprint
from memdir.browse._sources import BrowsedStore
from memdir.metrics import HealthReport, health_report
from memdir.store import Finding, conflict_findings, has_conflict, lint_store

__all__ = ["INLINE_CHECK_FILES", "Alarm", "Checks", "checks_for"]

INLINE_CHECK_FILES = 500
"""Stores with more files are linted and measured only on request (the health page)."""


@dataclass(frozen=True, slots=True)
class Alarm:
    """One health alarm, with the files (and lines) it points at."""

    kind: str
    message: str
    paths: tuple[str, ...]
    line: int | None = None


@dataclass
class Checks:
    """The lint findings and health alarms of one state of a store."""

    findings: list[Finding]
    report: HealthReport
    alarms: list[Alarm] = field(default_factory=list)

    def alarms_of(self, path: str) -> list[Alarm]:
        """The alarms that concern one file."""
        return [a for a in self.alarms if path in a.paths]

    def flagged(self) -> dict[str, int]:
        """How many findings and alarms each file has."""
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.path] = counts.get(finding.path, 0) + 1
        for alarm in self.alarms:
            for path in alarm.paths:
                counts[path] = counts.get(path, 0) + 1
        return counts

    def conflicted(self) -> set[str]:
        """The files holding a sync conflict block (marked as such in the tree)."""
        return {p for a in self.alarms if a.kind == "sync conflict" for p in a.paths}


def _unit_file(unit: str) -> str:
    """The file of a unit id such as ``/memories/a.md > ## Work`` (or the id itself)."""
    return unit.split(" > ", 1)[0].split("#", 1)[0].strip()


def _alarms(report: HealthReport) -> list[Alarm]:
    # Dangling references raise an alarm too, but lint already lists each one.
    alarms = [Alarm("near-duplicate", f"{p.a} and {p.b} read alike (cosine {p.cosine:.2f})",
                     (_unit_file(p.a), _unit_file(p.b))) for p in report.duplicates]
    alarms += [Alarm("stale description",
                     f"{m.description!r} no longer matches the file (cosine {m.cosine:.2f})",
                     (m.path,)) for m in report.stale_descriptions]
    alarms += [Alarm("conflicting values",
                     f"{s.subject!r} is given {len(s.values)} values with no date or past "
                     f"marker: {', '.join(s.values)}", (s.path,), s.lines[0] if s.lines else None)
               for s in report.stale_facts]
    files = report.metrics.tree.files
    # Bodies are joined from their pieces when asked for: keep only those with a conflict,
    # not a second copy of every text.
    conflicted = {p: body for p, f in files.items() if has_conflict(body := f.body)}
    alarms += [Alarm("sync conflict", message, (path,), line) for path, line, message in
               conflict_findings(conflicted, {p: files[p].body_line for p in conflicted})]
    return alarms


def checks_for(browser: Browser, entry: BrowsedStore, *, force: bool = False,
               files: int | None = None) -> Checks | None:
    """The store's current checks: computed if small or ``force``d, else only if cached.

    Args:
        browser: The session (its caches).
        entry: The store.
        force: Compute them whatever the store's size (the health page).
        files: The store's file count, when the caller has just counted them.
    """
    count_key = ("files", entry.id)
    if files is not None:
        browser.cache.put(count_key, files)
    if not force and not browser.cache.has(("checked", entry.id)):
        count = browser.cache.get(count_key, lambda: len(entry.store.files()))
        if count > INLINE_CHECK_FILES:
            return None
    key = ("checks", entry.id, fingerprint(entry))

    def compute() -> Checks:
        report = health_report(entry.store)
        return Checks(lint_store(entry.store), report, _alarms(report))

    found = browser.cache.get(key, compute)
    browser.cache.put(("checked", entry.id), True)
    return found
