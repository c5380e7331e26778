"""Audits of a skill library, file by file: the schema, and the outcome gate.

- The schema audit checks every entry's frontmatter (name, description) and its
  typed metadata (``type`` skill or note, ``sources`` a list of {task, outcome}).
- The gate audit flags every ``type: skill`` entry whose sources are all
  failures: a procedure that no successful attempt ever demonstrated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdir.store import SkillMetadata, Store, parse_file, validate_skill_metadata

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
        for defect in validate_skill_metadata(parsed.frontmatter):
            found.append(AuditFinding(path, "schema", defect.message))
    return found


def audit_gate(store: Store) -> list[AuditFinding]:
    """Skills whose sources are all failures, in path order."""
    found = []
    for path in store.files():
        fm = parse_file(store.read(path), _stem(path)).frontmatter
        if fm is None or fm.metadata is None or validate_skill_metadata(fm):
            continue
        meta = SkillMetadata.model_validate(fm.metadata)
        if meta.type == "skill" and all(s.outcome == "failure" for s in meta.sources):
            tasks = ", ".join(s.task for s in meta.sources)
            found.append(AuditFinding(
                path, "gate", f"a skill whose sources are all failures ({tasks})"))
    return found


def audit_library(store: Store) -> list[AuditFinding]:
    """Both audits, schema findings first."""
    return audit_schema(store) + audit_gate(store)
