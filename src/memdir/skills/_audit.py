"""Audits of a skill library, file by file: the schema, and the outcome gate.

- The schema audit checks every entry's frontmatter (name, description) and its
  typed metadata (``type`` skill or note) and sources (a list of {task, outcome}
  in ``metadata.sources`` or a ``## Sources`` section of the body).
- The gate audit flags every ``type: skill`` entry whose sources are all
  failures: a procedure that no successful attempt ever demonstrated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdir.store import Store, entry_sources, parse_file, validate_skill_metadata

__all__ = ["AuditFinding", "audit_gate", "audit_library", "audit_schema"]

Check = Literal["schema", "gate"]


@dataclass(frozen=True, slots=True)
class AuditFinding:
    """One problem of one entry."""

    path: str
    check: Check
    problem: str


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def audit_schema(store: Store) -> list[AuditFinding]:
    """Frontmatter and typed-metadata problems of every entry, in path order."""
    found = []
    for path in store.files():
        parsed = parse_file(store.read(path), _stem(path))
        for defect in parsed.defects:
            found.append(AuditFinding(path, "schema", defect.message))
        if parsed.frontmatter is None:
            continue
        for defect in validate_skill_metadata(parsed.frontmatter, parsed.body):
            found.append(AuditFinding(path, "schema", defect.message))
    return found


def audit_gate(store: Store) -> list[AuditFinding]:
    """Skills whose sources are all failures, in path order."""
    found = []
    for path in store.files():
        parsed = parse_file(store.read(path), _stem(path))
        fm = parsed.frontmatter
        if fm is None or fm.metadata is None or validate_skill_metadata(fm, parsed.body):
            continue
        sources = entry_sources(fm, parsed.body)
        if fm.metadata.get("type") == "skill" and all(o == "failure" for _, o in sources):
            tasks = ", ".join(task for task, _ in sources)
            found.append(AuditFinding(
                path, "gate", f"a skill whose sources are all failures ({tasks})"))
    return found


def audit_library(store: Store) -> list[AuditFinding]:
    """Both audits, schema findings first."""
    return audit_schema(store) + audit_gate(store)
