"""The outcome gate, enforced by the curator's write tools.

:class:`GatedLibrary` wraps the ``write`` set's ``create``, ``str_replace`` and
``insert`` so that every entry the curator leaves behind fits the skill schema
(``metadata.type`` skill or note; its sources, each a {task, outcome}, listed in
``metadata.sources`` or in a ``## Sources`` section of the body) and no failed
attempt produces or grows a positive procedure. The rule is the paper's: only a
successful attempt may create or extend a skill, and a failure may contribute
notes, a correction of the one step it showed to be wrong, and its own source
entry. Precisely, after a failed attempt a write that leaves a ``type: skill``
entry is allowed only when

- the entry was a skill before the write (a failure creates no skill and turns
  no note into one);
- its body (the Sources section aside) changed in at most one place, and that
  change rewrites or removes lines that were there: a block of lines added
  without rewriting any is an extension, and so is a new heading; the rewritten
  place may grow by one line at most, room for a missing precondition beside
  the step it guards (blank lines are not counted);
- its sources are the ones it had, plus this attempt as a failure.

A failure may also turn a skill into a note and write notes freely; and no
entry may be a skill whose sources are all failures, whoever writes it.

A refused write comes back to the model as a tool error saying what to do
instead; an edit that breaks a rule is rolled back before the error is returned.

Under the shell harness the curator writes with ``bash``, which offers no single
write to check, so the gate judges each command after the fact: still holding the
store lock, it compares the store's files before and after the command and puts
every created or changed entry through :func:`gate_problem`. A refused change is
undone exactly (the file gets its bytes from before the command back, or goes if
it is new) and the refusal is added to the command's result; allowed changes and
deletions stay. A file that only moved (same bytes, or same stem) is judged as an
edit of the file it came from.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from memdir.store import (
    Store,
    body_without_sources,
    entry_sources,
    parse_file,
    validate_skill_metadata,
)
from memdir.tools import ToolError, ToolSet, ToolSpec, make_toolset, tool_spec, write_set

__all__ = ["Attempt", "GatedLibrary", "gate_problem"]

_EXAMPLE = (
    "---\nname: {stem}\ndescription: <one line: what it holds and when it applies>\n"
    "metadata:\n  type: note\n  sources:\n    - {{task: {task}, outcome: {outcome}}}\n---\n"
)


_SHELL_GATE_DOC = (
    "\n\n        After each command the outcome gate checks every library entry it created\n"
    "        or changed; a change the gate refuses is undone and the result says why.")


@dataclass(frozen=True, slots=True)
class Attempt:
    """The task attempt the curator is integrating."""

    task_id: str
    success: bool

    @property
    def outcome(self) -> str:
        """``success`` or ``failure``, as written in ``metadata.sources``."""
        return "success" if self.success else "failure"


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _kind(text: str, stem: str) -> tuple[str | None, str, list[tuple[str, str]]]:
    """An entry's ``metadata.type`` (None when its schema is broken), body and sources."""
    parsed = parse_file(text, stem)
    fm = parsed.frontmatter
    if fm is None or fm.metadata is None or validate_skill_metadata(fm, parsed.body):
        return None, parsed.body, []
    kind = fm.metadata.get("type")
    return (kind if isinstance(kind, str) else None), parsed.body, entry_sources(fm, parsed.body)


def _schema_problem(text: str, stem: str, attempt: Attempt) -> str | None:
    parsed = parse_file(text, stem)
    if parsed.frontmatter is None:
        return None  # the write set's own header check explains this one
    defects = validate_skill_metadata(parsed.frontmatter, parsed.body)
    if not defects:
        return None
    listed = "\n".join(f"- {d.message}" for d in defects)
    return (f"every library entry needs metadata with a type and its sources.\n{listed}\n"
            "A header that fits (the sources may instead be listed in a '## Sources' "
            "section of the body, one '- {task: <id>, outcome: <outcome>}' a line):\n"
            + _EXAMPLE.format(stem=stem, task=attempt.task_id, outcome=attempt.outcome))


def gate_problem(old_text: str | None, new_text: str, stem: str, attempt: Attempt) -> str | None:
    """Why writing ``new_text`` (over ``old_text``, None for a new file) breaks the gate.

    Returns:
        An instructive message, or None when the write is allowed.
    """
    schema = _schema_problem(new_text, stem, attempt)
    if schema is not None:
        return schema
    kind, new_body, new_sources = _kind(new_text, stem)
    if kind != "skill":
        return None
    if all(outcome == "failure" for _, outcome in new_sources):
        return ("a skill must come from at least one successful attempt, and every source "
                "listed here is a failure. Write this as a note (metadata.type: note).")
    if attempt.success:
        return None
    old_kind, old_body, old_sources = (_kind(old_text, stem) if old_text is not None
                                       else (None, "", []))
    if old_kind != "skill":
        return (f"this attempt ({attempt.task_id}) failed, and only a successful attempt may "
                "create a skill. Record what went wrong as a note instead "
                "(metadata.type: note), e.g. what to avoid and what to do instead.")
    return (_correction_problem(old_body, new_body, attempt)
            or _sources_problem(old_sources, new_sources, attempt))


def _content_lines(body: str) -> list[str]:
    """The body's non-blank lines, Sources section cut, trailing spaces dropped."""
    return [line.rstrip() for line in body_without_sources(body).splitlines() if line.strip()]


def _is_heading(line: str) -> bool:
    return line.lstrip().startswith("#")


def _correction_problem(old_body: str, new_body: str, attempt: Attempt) -> str | None:
    """Why a failed attempt's edit of a skill's body is more than a correction (None if it is one).

    A correction changes the body in one place, rewriting or removing lines that
    were there; it may add one line beside what it rewrites, and no heading.
    """
    old, new = _content_lines(old_body), _content_lines(new_body)
    changes = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
               if op[0] != "equal"]
    failed = f"this attempt ({attempt.task_id}) failed, so it may not extend the skill"
    fix = ("A failure may correct the one step it showed to be wrong: reword, replace or "
           "remove that step where it stands (a missing precondition goes into the step, or "
           "on one line beside it); anything more it teaches goes into a note "
           "(metadata.type: note).")
    if len(changes) > 1:
        return (f"{failed}: this edit changes the procedure in {len(changes)} separate places. "
                f"{fix} Correct one step per edit.")
    if not changes:
        return None
    tag, i1, i2, j1, j2 = changes[0]
    if tag == "insert":
        return (f"{failed}: this edit adds lines without rewriting any that were there. {fix}")
    added = new[j1:j2]
    if any(_is_heading(line) and line not in old[i1:i2] for line in added):
        return f"{failed}: this edit adds a heading, a new section of the procedure. {fix}"
    if len(added) > (i2 - i1) + 1:
        return (f"{failed}: this edit turns {i2 - i1} line(s) into {len(added)}, more than a "
                f"correction needs. {fix}")
    return None


def _sources_problem(old_sources: list[tuple[str, str]], new_sources: list[tuple[str, str]],
                     attempt: Attempt) -> str | None:
    allowed = {*old_sources, (attempt.task_id, "failure")}
    if not set(old_sources) <= set(new_sources) or not set(new_sources) <= allowed:
        return (f"this attempt ({attempt.task_id}) failed: it may add itself to the skill's "
                f"sources as {{task: {attempt.task_id}, outcome: failure}}, but not remove "
                "or change the others.")
    return None


class GatedLibrary:
    """The curator's write set over a skill library, gated on the current attempt.

    Args:
        store: The library.
        inner: The tool set whose create, str_replace and insert are gated (a
            harness's builder set with those commands: ``write`` or ``bm25-write``).

    Raises:
        ValueError: ``inner`` has neither create, str_replace and insert nor a
            ``bash`` to gate.
    """

    def __init__(self, store: Store, inner: str = "write") -> None:
        self.store = store
        self.attempt: Attempt | None = None
        self.refusals: list[str] = []
        self._inner = write_set(store) if inner == "write" else make_toolset(inner, store)
        names = set(self._inner.tools)
        if not ({"create", "str_replace", "insert"} <= names or "bash" in names):
            raise ValueError(f"the outcome gate checks each create, str_replace and insert, "
                             f"or each bash command; the {inner} tool set has neither (use "
                             "write, bm25-write or shell, or the ungated curated_skills)")
        self.name = "skills-write" if inner == "write" else f"skills-{inner}"

    def _current(self) -> Attempt:
        if self.attempt is None:
            raise RuntimeError("set GatedLibrary.attempt before the curator writes")
        return self.attempt

    def _refuse(self, path: str, problem: str) -> ToolError:
        self.refusals.append(f"{path}: {problem.splitlines()[0]}")
        return ToolError(f"{path} was not written: {problem}")

    async def _checked_edit(self, run: ToolSpec, **kwargs: object) -> str:
        virtual = self.store.resolve(str(kwargs["path"]), "file").virtual
        before = self.store.read(virtual)
        result = await run.fn(**kwargs)
        after = self.store.read(virtual)
        problem = gate_problem(before, after, _stem(virtual), self._current())
        if problem is not None:
            self.store.edit(virtual, lambda _text: before)
            raise self._refuse(virtual, problem)
        return result

    def _judge_command(self, before: Mapping[str, bytes], after: Mapping[str, bytes]
                       ) -> tuple[dict[str, str], dict[str, bytes | None]]:
        """The gate's verdict on one command's changes to the library.

        Returns:
            Each refused entry's path -> the gate's message, and the undo: path ->
            the bytes it gets back (None: it goes). A refused file that moved
            brings back the file it came from as well, so nothing is lost.
        """
        created = [p for p in after if p not in before and p.endswith(".md")]
        deleted = [p for p in before if p not in after]
        origin: dict[str, str] = {}
        for path in created:  # a moved file is judged against the file it came from
            moved = ([d for d in deleted if before[d] == after[path]]
                     or [d for d in deleted if _stem(d) == _stem(path)])
            if moved:
                origin[path] = moved[0]
                deleted.remove(moved[0])
        problems: dict[str, str] = {}
        undo: dict[str, bytes | None] = {}
        for path, new in after.items():
            old = before.get(path)
            source = before.get(origin[path]) if path in origin else old
            if not path.endswith(".md") or new in (old, source):
                continue
            try:
                new_text = new.decode("utf-8")
                old_text = source.decode("utf-8") if source is not None else None
            except UnicodeDecodeError:
                continue  # not text: the shell's own store check names it
            problem = gate_problem(old_text, new_text, _stem(path), self._current())
            if problem is not None:
                problems[path] = problem
                undo[path] = old
                if path in origin:
                    undo[origin[path]] = before[origin[path]]
        return problems, undo

    def _gated_bash(self, run: ToolSpec) -> ToolSpec:
        """The shell's ``bash``, each command's store changes judged by the gate afterwards."""

        async def bash(command: str) -> str:
            with self.store.locked():  # held from before the command until the undo is done
                before, _ = self.store.capture()
                result = await run.fn(command=command)
                after, folders = self.store.capture()
                problems, undo = self._judge_command(before, after)
                if undo:
                    kept = {p: d for p, d in after.items() if p not in undo}
                    kept.update({p: d for p, d in undo.items() if d is not None})
                    self.store.reset_to(kept, folders)
            if not problems:
                return result
            lines = [result, "Outcome gate: the command's changes to these entries were undone "
                     "(each is back as it was before the command, or gone if it was new); "
                     "its other changes stay."]
            lines += [str(self._refuse(path, problem)) for path, problem in problems.items()]
            raise ToolError("\n".join(lines))

        doc = run.fn.__doc__ or ""
        bash.__doc__ = doc.replace("\n\n        Args:", _SHELL_GATE_DOC + "\n\n        Args:", 1)
        return tool_spec(bash, read_only=False, destructive=True)

    def toolset(self) -> ToolSet:
        """The gated set: the inner set with gated create, str_replace and insert (or bash)."""
        inner = self._inner.tools
        if "bash" in inner:
            return ToolSet(self.name, [self._gated_bash(spec) if name == "bash" else spec
                                       for name, spec in inner.items()])

        async def create(path: str, file_text: str) -> str:
            """Create a new library entry (a skill or a note); folders on the way are created.

            The file must not exist yet. Its header names the file, describes it in one
            line, and carries metadata: type (skill for a procedure, note for a lesson
            or observation) and sources (the attempts it came from, each with its
            outcome). Only a successful attempt may create a skill.

            Args:
                path: The new file's path under /memories, ending in .md.
                file_text: The complete content of the file, header first.
            """
            virtual = self.store.resolve(path, "file").virtual
            problem = gate_problem(None, file_text, _stem(virtual), self._current())
            if problem is not None:
                raise self._refuse(virtual, problem)
            return await inner["create"].fn(path=path, file_text=file_text)

        async def str_replace(path: str, old_str: str, new_str: str) -> str:
            """Replace one exact passage of a library entry with new text.

            old_str must occur exactly once, character for character, without the
            line numbers view shows. The entry must keep its type and sources. After
            a failed attempt a skill may only have the step the failure exposed
            corrected in place, and the attempt added to its sources.

            Args:
                path: The entry to edit, e.g. /memories/heating/heat-an-object.md.
                old_str: The exact text to replace; it must appear exactly once.
                new_str: The text to put in its place (may be empty).
            """
            return await self._checked_edit(inner["str_replace"], path=path,
                                            old_str=old_str, new_str=new_str)

        async def insert(path: str, insert_line: int, insert_text: str) -> str:
            """Insert text into a library entry after a given line.

            insert_line 0 puts the text first; the file's line count appends it. The
            header must stay valid. After a failed attempt nothing may be inserted
            into a skill but the attempt's line in its sources.

            Args:
                path: The entry to edit.
                insert_line: The line after which to insert, from 0 to the line count.
                insert_text: The text to insert; it becomes one or more whole lines.
            """
            return await self._checked_edit(inner["insert"], path=path,
                                            insert_line=insert_line, insert_text=insert_text)

        gated = {
            "create": tool_spec(create, read_only=False),
            "str_replace": tool_spec(str_replace, read_only=False, destructive=True),
            "insert": tool_spec(insert, read_only=False),
        }
        return ToolSet(self.name, [gated.get(name, spec) for name, spec in inner.items()])
