"""Lint: every way a store breaks its contract, and the mechanical fixes.

Checks: frontmatter present and valid YAML; ``name`` a kebab-case slug equal to
the file stem; ``description`` present and one short line; ``metadata`` a map
(and, for skill libraries, the skill schema); cross-references that resolve to a
file and, when they name one, a section; no non-markdown files.

A markdown file without any header is a warning, not an error: files written
through the Anthropic memory tool profile have none, and ``fix_store`` adds one
derived from the file.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from memdir.store._document import Document, load_document, parse_document
from memdir.store._errors import StoreError
from memdir.store._frontmatter import (
    SLUG,
    render_file,
    slugify,
    validate_skill_metadata,
)
from memdir.store._markdown import Section, XRef, find_section, section_in, sections
from memdir.store._store import Store
from memdir.store._tree import Node

__all__ = ["Finding", "check_xref", "fix_store", "lint_store"]


@dataclass(frozen=True, slots=True)
class Finding:
    """A contract defect at a place in the store."""

    path: str
    code: str
    message: str
    line: int | None = None
    fixable: bool = False
    severity: Literal["error", "warning"] = "error"

    def to_dict(self) -> dict[str, object]:
        """A plain mapping for JSON output."""
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        tag = " (warning)" if self.severity == "warning" else ""
        return f"{where}: {self.code}{tag}: {self.message}"


def check_xref(store: Store, ref: XRef, cache: dict[str, Document] | None = None,
               targets: dict[str, tuple[str | None, str | None]] | None = None) -> str | None:
    """Return why a cross-reference does not resolve, or None if it does.

    Args:
        store: The store the reference points into.
        ref: The reference.
        cache: Parsed files by path, filled as sections are looked up.
        targets: Each target already checked -> (its path, or None, and why it is no
            file, or None), so a store citing one file many times resolves it once.
    """
    checked = None if targets is None else targets.get(ref.target)
    if checked is None:
        checked = _check_target(store, ref.target)
        if targets is not None:
            targets[ref.target] = checked
    virtual, problem = checked
    if virtual is None:
        return problem
    if not ref.section:
        return None
    cache = {} if cache is None else cache
    doc = cache.get(virtual)
    if doc is None:
        doc = load_document(store, virtual)
        cache[virtual] = doc
    try:
        find_section(doc.body, ref.section, doc.body_line)
    except LookupError:
        return f"{ref.target} has no section {' > '.join(ref.section)}"
    return None


def _check_target(store: Store, target: str) -> tuple[str | None, str | None]:
    """A reference target's path if it is a file, else None and why not."""
    try:
        resolved = store.resolve(target, "file")
    except StoreError as exc:
        return None, str(exc)
    if store.kind(resolved.virtual) != "file":
        return None, f"{target} does not exist"
    return resolved.virtual, None


def _unreadable(path: str, exc: StoreError) -> Finding:
    why = str(exc)
    if "UTF-8" in why:
        why += (" grep reads it with the bad bytes replaced, but view and the edit "
                "tools refuse it; convert it (e.g. iconv -f latin1 -t utf-8) or "
                "rewrite it as UTF-8.")
    return Finding(path, "unreadable", why)


def lint_store(store: Store, *, skills: bool = False) -> list[Finding]:
    """Check a whole store; return every defect found, sorted by path and line.

    One walk of the tree names the files and the other entries; each file is
    read once (through one handle per folder) and parsed once. A reference to a
    file the walk found resolves by looking it up among them; any other target
    is checked on disk once, however often it is cited. Each file named with a
    section has its sections found once. Only the bodies (for those sections)
    are kept, not the parsed files.

    Args:
        store: The store to check.
        skills: Also require the skill setting's metadata schema on every file.
    """
    findings: list[Finding] = []
    nodes = store.tree()
    memory = [node for node in nodes if node.kind == "memory"]
    by_name: dict[str, list[str]] = {}
    for node in memory:
        by_name.setdefault(node.name, []).append(node.virtual)
    files: set[str] = set()  # the walk's files whose path the store accepts
    bodies: dict[str, tuple[str, int]] = {}  # each parsed file's body and its first line
    cited: list[tuple[str, list[XRef]]] = []
    for node, data in store.read_nodes(memory):  # one handle per folder, not a lookup per file
        path = node.virtual
        try:
            store.split(path, "file")  # a name the store refuses is reported as before
        except StoreError as exc:
            findings.append(_unreadable(path, exc))
            continue
        text = None
        if data is not None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                files.add(path)  # not UTF-8, but a file: a reference to it resolves
        try:
            # A file gone, replaced or not UTF-8 is read again by the store, which says
            # what it is.
            doc = parse_document(path, text) if text is not None else load_document(store, path)
        except StoreError as exc:
            findings.append(_unreadable(path, exc))
            continue
        files.add(path)
        bodies[path] = (doc.body, doc.body_line)
        for d in doc.defects:
            findings.append(_finding(path, d.code, d.message, d.line, d.fixable))
        if skills and doc.frontmatter is not None:
            for d in validate_skill_metadata(doc.frontmatter, doc.body):
                findings.append(Finding(path, d.code, d.message, d.line, d.fixable))
        refs = doc.xrefs
        if refs:
            cited.append((path, refs))
    references = _References(store, files, bodies)
    for path, refs in cited:
        for ref in refs:
            problem = references.problem(ref)
            if problem is not None:
                findings.append(Finding(path, "dangling-reference",
                                        _dangling(ref, problem, by_name), ref.line))
    findings.extend(_entry_findings(store, nodes))
    return sorted(findings, key=lambda f: (f.path, f.line or 0, f.code))


class _References:
    """Cross-references checked against one walk: :func:`check_xref`'s answers, each once.

    Args:
        store: The store.
        files: The agent paths of the walk's files whose path the store accepts.
        bodies: Each parsed file's body and the line it starts on.
    """

    def __init__(self, store: Store, files: set[str],
                 bodies: dict[str, tuple[str, int]]) -> None:
        self.store = store
        self.files = files
        self.bodies = bodies
        self.targets: dict[str, tuple[str | None, str | None]] = {}
        self.sections: dict[str, list[Section]] = {}

    def problem(self, ref: XRef) -> str | None:
        """Why ``ref`` does not resolve, or None if it does (as :func:`check_xref` says)."""
        if ref.target in self.files:
            virtual: str | None = ref.target  # the path is the walk's own spelling of it
        else:
            checked = self.targets.get(ref.target)
            if checked is None:
                checked = self.targets[ref.target] = _check_target(self.store, ref.target)
            virtual, problem = checked
            if virtual is None:
                return problem
        if not ref.section:
            return None
        assert virtual is not None
        found = self.sections.get(virtual)
        if found is None:
            body = self.bodies.get(virtual)
            if body is None:
                doc = load_document(self.store, virtual)
                body = self.bodies[virtual] = (doc.body, doc.body_line)
            found = self.sections[virtual] = sections(*body)
        try:
            section_in(found, ref.section)
        except LookupError:
            return f"{ref.target} has no section {' > '.join(ref.section)}"
        return None


def _dangling(ref: XRef, problem: str, by_name: dict[str, list[str]]) -> str:
    """The message of a reference to nothing, with the likely cause and the fix."""
    if ref.section and not problem.endswith("does not exist"):
        return (f"cross-reference {problem}: the heading was renamed or removed; point it at "
                f"one of the file's headings (toc {ref.target} lists them) or drop the section.")
    if not problem.endswith("does not exist"):
        return f"cross-reference {problem}"
    elsewhere = [p for p in by_name.get(ref.target.rsplit("/", 1)[-1], []) if p != ref.target]
    if elsewhere:
        where = ", ".join(elsewhere[:3]) + (" ..." if len(elsewhere) > 3 else "")
        return (f"cross-reference {problem}; a file of that name is at {where} (moved or "
                "renamed?): point the reference there.")
    return (f"cross-reference {problem} (deleted, renamed, or never written): point it at an "
            "existing file or remove it.")


def _entry_findings(store: Store, nodes: list[Node]) -> list[Finding]:
    """Entries of the walk ``nodes`` no tool can use.

    Other files, links, special files, and files over the write cap.
    """
    found: list[Finding] = []
    for node in nodes:
        virtual = node.virtual
        if node.kind == "memory" and node.size > store.max_file_bytes:
            found.append(Finding(
                virtual, "too-large",
                f"{node.size:,} bytes, over the store's write cap of {store.max_file_bytes:,} "
                "(MEMDIR_MAX_FILE_BYTES): view and grep read it, but no edit of it can be "
                "saved; split it into smaller files (create the parts, then delete it)."))
        elif node.kind == "link":
            found.append(Finding(
                virtual, "symlink",
                "a symbolic link: the store never follows links, so no tool reads it and "
                "search skips it; replace it with a copy of the file it points to, or delete "
                "it."))
        elif node.kind == "special":
            found.append(Finding(
                virtual, "special-file",
                "a FIFO, socket or device, which no tool reads; delete it."))
        elif node.kind == "other" and not (len(node.parts) == 1 and node.name.startswith(".")):
            stem = node.name.rsplit(".", 1)[0] if "." in node.name.lstrip(".") else node.name
            found.append(Finding(
                virtual, "not-markdown",
                "Only .md files belong in a store (memdir's search skips this one); rename it "
                f"to {slugify(stem)}.md with memdir's rename tool, or move it out."))
    return found


def _finding(path: str, code: str, message: str, line: int | None, fixable: bool) -> Finding:
    if code != "missing-frontmatter":
        return Finding(path, code, message, line, fixable)
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    if SLUG.match(stem):
        message = (
            "No frontmatter: memdir lists the file without a description and cannot check "
            f"its name. `memdir lint --fix` adds a header (name: {stem}, the first line as "
            "description)."
        )
        return Finding(path, code, message, line, True, "warning")
    folder = path.rsplit("/", 1)[0]
    message = (
        f"No frontmatter, and {stem!r} cannot be a header name (lowercase words joined by "
        f"hyphens). Rename the file to {folder}/{slugify(stem)}.md, then `memdir lint "
        "--fix` adds a header."
    )
    return Finding(path, code, message, line, False, "warning")


def fix_store(store: Store) -> list[Finding]:
    """Apply the mechanical fixes and return what was changed.

    Fixed: a missing header (added, with the stem as name and the first line of
    text as description), a missing, malformed or mismatched ``name`` (set to the
    stem), a multi-line description (joined into one line). Everything else needs
    a judgement and is left for a person or the management agent.
    """
    fixed: list[Finding] = []
    for path in store.files():
        try:
            doc = load_document(store, path)
        except StoreError:
            continue  # unreadable (not UTF-8, vanished): lint_store reports it, nothing to fix
        codes = {d.code for d in doc.defects if d.fixable}
        if not codes or not SLUG.match(doc.name):
            continue
        new_text = _fixed_text(doc, codes)
        if new_text is None or new_text == doc.text:
            continue
        store.write(path, new_text, expect=store.version(path))
        after = parse_document(path, new_text)
        remaining = {d.code for d in after.defects}
        for code in sorted(codes - remaining):
            fixed.append(Finding(path, code, "fixed", fixable=True))
    return fixed


def _fixed_text(doc: Document, codes: set[str]) -> str | None:
    from memdir.store._models import Frontmatter

    if "missing-frontmatter" in codes:
        first = next((ln.strip("# ").strip() for ln in doc.body.splitlines() if ln.strip()), "")
        desc = first[:120] or f"Notes on {doc.name.replace('-', ' ')}"
        return render_file(Frontmatter(name=doc.name, description=desc), doc.body)
    if doc.frontmatter is None:
        return None
    data = doc.frontmatter.model_dump()
    extra = doc.frontmatter.model_extra or {}
    fm = Frontmatter.model_validate({**extra, **data})
    if codes & {"missing-name", "bad-name", "name-mismatch"}:
        fm.name = doc.name
    if "multiline-description" in codes:
        fm.description = " ".join(fm.description.split())
    return render_file(fm, doc.body)

