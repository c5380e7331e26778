"""The outcome gate, enforced by the curator's write tools.

:class:`GatedLibrary` wraps the ``write`` set's ``create``, ``str_replace`` and
``insert`` so that every entry the curator leaves behind fits the skill schema
(``metadata.type`` skill or note, ``metadata.sources`` a list of {task, outcome})
and no failed attempt produces or grows a positive procedure:

- a failed attempt may not create a ``type: skill`` entry or turn a note into a
  skill; it may correct an existing skill, rewording the step the failure showed
  to be wrong, but not extend it (the edit may add no line to the skill's body)
  and it may add itself to the skill's sources (it may also turn the skill into a
  note, or write notes freely);
- no entry may be a skill whose sources are all failures, whoever writes it.

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

from collections.abc import Mapping
from dataclasses import dataclass

from memdir.store import Frontmatter, SkillMetadata, Store, parse_file, validate_skill_metadata
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


def _metadata(fm: Frontmatter | None) -> SkillMetadata | None:
    if fm is None or fm.metadata is None or validate_skill_metadata(fm):
        return None
    return SkillMetadata.model_validate(fm.metadata)


def _sources(meta: SkillMetadata) -> list[tuple[str, str]]:
    return [(s.task, s.outcome) for s in meta.sources]


def _schema_problem(text: str, stem: str, attempt: Attempt) -> str | None:
    parsed = parse_file(text, stem)
    if parsed.frontmatter is None:
        return None  # the write set's own header check explains this one
    defects = validate_skill_metadata(parsed.frontmatter)
    if not defects:
        return None
    listed = "\n".join(f"- {d.message}" for d in defects)
    return (f"every library entry needs metadata with a type and its sources.\n{listed}\n"
            "A header that fits:\n"
            + _EXAMPLE.format(stem=stem, task=attempt.task_id, outcome=attempt.outcome))


def gate_problem(old_text: str | None, new_text: str, stem: str, attempt: Attempt) -> str | None:
    """Why writing ``new_text`` (over ``old_text``, None for a new file) breaks the gate.

    Returns:
        An instructive message, or None when the write is allowed.
    """
    schema = _schema_problem(new_text, stem, attempt)
    if schema is not None:
        return schema
    new = parse_file(new_text, stem)
    new_meta = _metadata(new.frontmatter)
    if new_meta is None or new_meta.type != "skill":
        return None
    if all(outcome == "failure" for _, outcome in _sources(new_meta)):
        return ("a skill must come from at least one successful attempt, and every source "
                "listed here is a failure. Write this as a note (metadata.type: note).")
    if attempt.success:
        return None
    old = parse_file(old_text, stem) if old_text is not None else None
    old_meta = _metadata(old.frontmatter) if old is not None else None
    if old is None or old_meta is None or old_meta.type != "skill":
        return (f"this attempt ({attempt.task_id}) failed, and only a successful attempt may "
                "create a skill. Record what went wrong as a note instead "
                "(metadata.type: note), e.g. what to avoid and what to do instead.")
    return _correction_problem(old.body, new.body, _sources(old_meta), _sources(new_meta),
                               attempt)


def _lines(body: str) -> int:
    return sum(1 for line in body.splitlines() if line.strip())


def _correction_problem(old_body: str, new_body: str, old_sources: list[tuple[str, str]],
                        new_sources: list[tuple[str, str]], attempt: Attempt) -> str | None:
    """Why a failed attempt's edit of a skill is more than a correction (None if it is one).

    A correction rewrites what is there: the body keeps at most its number of
    non-empty lines, and the sources stay as they were but for this attempt added.
    """
    if _lines(new_body) > _lines(old_body):
        return (f"this attempt ({attempt.task_id}) failed, so it may not extend the skill's "
                "procedure (this edit adds lines). It may correct the step the failure "
                "exposed by rewording that step in place, without adding lines; new advice "
                "beyond that goes into a note.")
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
            line numbers view shows. The header must keep its metadata (type and
            sources); a failed attempt may not change a skill's steps or sources.

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
            header must stay valid; a failed attempt may not add to a skill.

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
