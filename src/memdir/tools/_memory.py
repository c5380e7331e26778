"""The memory command set and the read, write and folder tool sets built from it.

:class:`MemoryCommands` holds one method per command of Anthropic's client-side
memory tool (``view``, ``create``, ``str_replace``, ``insert``, ``delete``,
``rename``), with the same parameter names. The tool sets, the MCP server and
the Anthropic adapter all call these methods, so every front end behaves alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memdir.store import (
    ANY_NAME,
    ANY_VERSION,
    ROOT,
    AnyVersion,
    NotFoundError,
    PathError,
    Store,
    StorePath,
    conflict_followup,
    conflict_note,
    digest_text,
    parse_file,
    render_file,
    resolve,
    slugify,
)
from memdir.tools._dangling import broken_by_edit, moved_note
from memdir.tools._grep import grep_tool
from memdir.tools._limits import remaining
from memdir.tools._outline import section_read_tool, toc_tool
from memdir.tools._spec import ToolError, ToolSet, ToolSpec, tool_flags, tool_spec
from memdir.tools._view import (
    NUMBERED_LINE,
    markdown_name,
    number_capped,
    number_lines,
    render_listing,
    split_lines,
)

__all__ = ["MemoryCommands", "folder_set", "read_set", "read_specs", "write_set"]

_HEADER_EXAMPLE = "---\nname: {stem}\ndescription: <one line saying what the file holds>\n---\n"
_NAME_LINE = re.compile(r"^name:[ \t]*[^\r\n]*", re.MULTILINE)
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _header_problems(text: str, stem: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in parse_file(text, stem).defects]


def _check_new_file(path: str, text: str) -> None:
    stem = _stem(path)
    if not _SLUG.match(stem):
        # No header can make this name valid, so the hint names a file name that works.
        better = f"{path.rsplit('/', 1)[0]}/{slugify(stem)}.md"
        raise ToolError(
            f"{path} was not created: {stem!r} cannot be a memory file name (lowercase "
            f"letters, digits and single hyphens). Create {better} instead, starting with:\n"
            + _HEADER_EXAMPLE.format(stem=slugify(stem))
        )
    problems = _header_problems(text, stem)
    if problems:
        listed = "\n".join(f"- {message}" for _, message in problems)
        raise ToolError(
            f"{path} was not created: every memory file must open with a frontmatter "
            f"header.\n{listed}\nStart file_text with:\n"
            + _HEADER_EXAMPLE.format(stem=_stem(path))
        )


def _check_edit(path: str, old: str, new: str) -> None:
    stem = _stem(path)
    before = {code for code, _ in _header_problems(old, stem)}
    added = [message for code, message in _header_problems(new, stem) if code not in before]
    if added:
        listed = "\n".join(f"- {message}" for message in added)
        raise ToolError(
            f"{path} was not changed: the edit would break its frontmatter header.\n{listed}\n"
            "The header must stay:\n" + _HEADER_EXAMPLE.format(stem=stem)
        )


def _snippet(text: str, first: int, last: int) -> str:
    lines = split_lines(text)
    start = max(1, first - 2)
    end = min(len(lines), last + 2)
    return number_lines(lines[start - 1 : end], start)


class MemoryCommands:
    """The memory commands over one store: one method per command.

    Args:
        store: The store the commands read and change.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    @tool_flags(read_only=True)
    async def view(self, path: str, view_range: list[int] | None = None) -> str:
        """Show a memory file with numbered lines, or list a folder.

        For a file: every line of it (frontmatter included) is prefixed by its line
        number and a tab; line 1 is the first line of the file. Long files are cut
        off with a note; read further with view_range. For a folder (/memories
        is the root): the tree of folders and files, each file with its size and
        its one-line description, so you can pick what to open without reading it.
        Start here to survey the store.

        Args:
            path: A file or folder under /memories, e.g. /memories or
                /memories/people/alice.md.
            view_range: Optional [start, end] line numbers of a file to show, 1-based and
                inclusive; end -1 means to the end of the file. Ignored for folders.
        """
        return self._view(path, view_range)[0]

    def _view(self, path: str, view_range: list[int] | None) -> tuple[str, str | None]:
        """What view shows, and the file's version (None for a folder)."""
        target = self._viewable(path)
        if self.store.kind(target.virtual) == "dir":
            return render_listing(self.store, target), None
        if not target.virtual.endswith(".md"):
            raise NotFoundError(f"{target.virtual} does not exist. View {ROOT} to see the store.")
        text = self.store.read(target.virtual)
        version = digest_text(text)
        lines = split_lines(text)
        note = conflict_note(target.virtual, text)  # "" unless a sync kept two versions
        if view_range is None:
            if not lines:
                return f"{target.virtual} is empty.", version
            return number_capped(target.virtual, lines, 1) + note, version
        start, end = _check_range(target.virtual, view_range, len(lines))
        return number_capped(target.virtual, lines[start - 1 : end], start) + note, version

    def _viewable(self, path: str) -> StorePath:
        """Resolve a path to view; an existing non-markdown file gets a hint that works."""
        try:
            return self.store.resolve(path)
        except PathError:
            target = resolve(self.store.root, path, "any", ANY_NAME)
            if not target.host.is_file():
                raise
        name = target.virtual.rsplit("/", 1)[-1]
        folder = target.virtual.rsplit("/", 1)[0]
        raise ToolError(
            f"{target.virtual} is not a markdown file, so memdir's tools do not read it. "
            f"Bring it in with rename(old_path={target.virtual!r}, "
            f"new_path={folder + '/' + markdown_name(name)!r}), then view it."
        )

    @tool_flags(read_only=False)
    async def create(self, path: str, file_text: str) -> str:
        """Create a new memory file (folders on the way are created too).

        The file must not exist yet: create never overwrites, so that no saved
        memory is lost by accident. To change a file use str_replace or insert; to
        replace it entirely, delete it first. The text must open with a frontmatter
        header whose name equals the file name without .md, e.g. for
        /memories/people/alice.md:
        ---
        name: alice
        description: One line saying what the file holds
        ---
        Names are lowercase words joined by hyphens. Files have a size cap.

        Args:
            path: The new file's path under /memories, ending in .md, e.g.
                /memories/people/alice.md.
            file_text: The complete content of the file, header first.
        """
        target = self.store.resolve(path, "file")
        if self.store.exists(target.virtual):
            raise ToolError(
                f"{target.virtual} already exists and create never overwrites. View it, then "
                "change it with str_replace or insert; or delete it first to replace it whole."
            )
        _check_new_file(target.virtual, file_text)
        self.store.create(target.virtual, file_text)
        count = len(split_lines(file_text))
        return f"Created {target.virtual} ({count} lines)."

    @tool_flags(read_only=False, destructive=True)
    async def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """Replace one exact passage of a memory file with new text.

        old_str must occur exactly once in the file, matching character for
        character (spaces, line breaks and all); include a few surrounding words if
        the passage repeats. Do not include the line-number prefixes view shows.
        To delete a passage, pass an empty new_str. The frontmatter header must
        remain valid after the edit.

        Args:
            path: The file to edit, e.g. /memories/people/alice.md.
            old_str: The exact text to replace; it must appear exactly once.
            new_str: The text to put in its place (may be empty).
        """
        return await self._str_replace(path, old_str, new_str, ANY_VERSION)

    async def _str_replace(
        self, path: str, old_str: str, new_str: str, expect: str | AnyVersion
    ) -> str:
        virtual = self.store.resolve(path, "file").virtual
        if old_str == "":
            raise ToolError("old_str is empty; give the exact text to replace.")
        result: dict[str, int] = {}

        def change(text: str) -> str:
            first, more = _first_two(text, old_str)
            if first < 0:
                hint = (
                    " Leave out the line numbers and tab that view puts before each line."
                    if NUMBERED_LINE.match(old_str)
                    else ""
                )
                raise ToolError(
                    f"old_str was not found in {virtual}. It must match the file exactly, "
                    "including whitespace and line breaks; view the file and copy the text."
                    + hint
                )
            if more >= 0:
                raise ToolError(_repeated(text, old_str, virtual))
            new = text[:first] + new_str + text[first + len(old_str) :]
            _check_edit(virtual, text, new)
            result["first"] = text.count("\n", 0, first) + 1
            remaining()  # out of time: stop here, before anything is written
            return new

        before, new_text = _edit(self.store, virtual, _keeping_crlf(change), expect)
        first = result["first"]
        last = first + new_str.count("\n")
        return (f"Edited {virtual}. The changed lines now read:\n"
                + _snippet(new_text, first, last)
                + broken_by_edit(self.store, virtual, before, new_text)
                + conflict_followup(virtual, before, new_text))

    @tool_flags(read_only=False)
    async def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        """Insert text into a memory file after a given line.

        insert_line 0 puts the text before the first line; insert_line n (the
        number of lines) appends it at the end. Line numbers are the ones view
        shows. Inserting above the frontmatter header is refused.

        Args:
            path: The file to edit, e.g. /memories/people/alice.md.
            insert_line: The line after which to insert, from 0 to the file's line count.
            insert_text: The text to insert; it becomes one or more whole lines.
        """
        return await self._insert(path, insert_line, insert_text, ANY_VERSION)

    async def _insert(
        self, path: str, insert_line: int, insert_text: str, expect: str | AnyVersion
    ) -> str:
        virtual = self.store.resolve(path, "file").virtual

        def change(text: str) -> str:
            lines = split_lines(text)
            if not 0 <= insert_line <= len(lines):
                raise ToolError(
                    f"insert_line {insert_line} is out of range: {virtual} has {len(lines)} "
                    f"lines, so insert_line must be between 0 and {len(lines)}."
                )
            added = split_lines(insert_text) or [""]
            new = "\n".join(lines[:insert_line] + added + lines[insert_line:])
            if text.endswith("\n") or not lines:
                new += "\n"
            _check_edit(virtual, text, new)
            remaining()  # out of time: stop here, before anything is written
            return new

        before, new_text = _edit(self.store, virtual, _keeping_crlf(change), expect)
        count = len(split_lines(insert_text) or [""])
        first = insert_line + 1
        return (f"Inserted {count} line(s) into {virtual} after line {insert_line}:\n"
                + _snippet(new_text, first, first + count - 1)
                + broken_by_edit(self.store, virtual, before, new_text)
                + conflict_followup(virtual, before, new_text))

    @tool_flags(read_only=False, destructive=True)
    async def delete(self, path: str) -> str:
        """Delete a memory file, or a folder with everything inside it.

        Deletion cannot be undone; prefer editing a file when only part of it is
        out of date. The root /memories cannot be deleted.

        Args:
            path: The file or folder to delete, e.g. /memories/old/notes.md.
        """
        return await self._delete(path, ANY_VERSION)

    async def _delete(self, path: str, expect: str | AnyVersion) -> str:
        target = self.store.resolve(path)
        is_dir = self.store.kind(target.virtual) == "dir"
        count = self.store.delete(target.virtual, expect=expect)
        note = moved_note(self.store, target.virtual, None)
        if is_dir:
            return f"Deleted the folder {target.virtual} and the {count} file(s) in it.{note}"
        return f"Deleted {target.virtual}.{note}"

    @tool_flags(read_only=False)
    async def rename(self, old_path: str, new_path: str) -> str:
        """Move or rename a memory file or folder.

        The destination must not exist. Missing folders on the way are created and
        folders left empty are removed. When a file gets a new name, the name in
        its frontmatter is updated to match; nothing else in it changes. Cross-
        references in other files are not rewritten: grep for the old path and fix
        them.

        Args:
            old_path: The file or folder to move, e.g. /memories/notes/alice.md.
            new_path: Where it goes, e.g. /memories/people/alice.md (a file keeps .md).
        """
        src = resolve(self.store.root, old_path, "any", ANY_NAME)  # a stray file may become .md
        dst = self.store.resolve(new_path)
        stem = _stem(dst.virtual)
        if dst.virtual.endswith(".md") and not _SLUG.match(stem):
            raise ToolError(
                f"{stem!r} cannot be a memory file name: use lowercase letters, digits and "
                f"single hyphens, e.g. {slugify(stem)}.md."
            )
        renamed = _stem(src.virtual) != _stem(dst.virtual) and dst.virtual.endswith(".md")
        # The name: edit and the move are one step: the edited text is written
        # first, so a failure of either leaves the file where and as it was.
        self.store.rename(src.virtual, dst.virtual,
                          transform=(lambda text: _set_name(text, stem)) if renamed else None)
        return f"Moved {src.virtual} to {dst.virtual}." + moved_note(self.store, src.virtual,
                                                                     dst.virtual)

    @tool_flags(read_only=False)
    async def move(self, old_path: str, new_path: str) -> str:
        """Move a memory file or folder to another folder, never changing any content.

        A file keeps its file name and moves to another folder (its name in the
        frontmatter therefore stays valid); a folder may be moved and renamed
        freely. The destination must not exist; missing folders on the way are
        created and folders left empty are removed. File contents stay
        byte-for-byte the same.

        Args:
            old_path: The file or folder to move, e.g. /memories/session-03.md.
            new_path: Where it goes, e.g. /memories/travel/session-03.md (same file name
                for a file).
        """
        src = self.store.resolve(old_path)
        dst = self.store.resolve(new_path)
        if src.virtual.endswith(".md") and _stem(src.virtual) != _stem(dst.virtual):
            name = src.virtual.rsplit("/", 1)[-1]
            is_file = dst.virtual.endswith(".md")
            folder = dst.virtual.rsplit("/", 1)[0] if is_file else dst.virtual
            raise ToolError(
                f"A file keeps its file name when moved here: move {src.virtual} to "
                f"{folder}/{name} (or into another folder), not to {dst.virtual}."
            )
        self.store.rename(src.virtual, dst.virtual)
        return f"Moved {src.virtual} to {dst.virtual}." + moved_note(self.store, src.virtual,
                                                                     dst.virtual)


def _edit(store: Store, virtual: str, change: Callable[[str], str],
          expect: str | AnyVersion) -> tuple[str, str]:
    """:meth:`Store.edit` that returns the text before and after the change."""
    texts: list[str] = []

    def recorded(text: str) -> str:
        new = change(text)
        texts[:] = [text, new]
        return new

    store.edit(virtual, recorded, expect=expect)
    return texts[0], texts[1]


def _keeping_crlf(change: Callable[[str], str]) -> Callable[[str], str]:
    """Run ``change`` on a file with Windows line endings as if they were plain newlines.

    view shows lines without their carriage returns, so the text a model copies
    from it has plain newlines; the edited file gets its CRLF endings back.
    """

    def wrapped(text: str) -> str:
        if "\r\n" not in text or text.count("\n") != text.count("\r\n"):
            return change(text)
        return change(text.replace("\r\n", "\n")).replace("\n", "\r\n")

    return wrapped


_LISTED_OCCURRENCES = 10
"""Most starting lines a str_replace error lists for an old_str that repeats."""


def _first_two(text: str, needle: str) -> tuple[int, int]:
    """Where ``needle`` first occurs in ``text`` and where it occurs next (-1: nowhere).

    Overlapping occurrences count: ``aa`` occurs twice in ``aaa``. Two searches,
    each linear in the text, whatever the needle.
    """
    first = text.find(needle)
    return first, (text.find(needle, first + 1) if first >= 0 else -1)


def _repeated(text: str, needle: str, virtual: str) -> str:
    """The error for an old_str found more than once, computed in linear time.

    Lists the starting lines of the first :data:`_LISTED_OCCURRENCES` occurrences
    (overlapping ones included), counting line breaks once across the text.
    """
    starts: list[int] = []
    at = text.find(needle)
    while at >= 0 and len(starts) <= _LISTED_OCCURRENCES:
        starts.append(at)
        at = text.find(needle, at + 1)
    lines: list[int] = []
    line, seen = 1, 0
    for start in starts[:_LISTED_OCCURRENCES]:
        line += text.count("\n", seen, start)
        seen = start
        lines.append(line)
    numbers = ", ".join(str(n) for n in lines)
    if len(starts) <= _LISTED_OCCURRENCES:
        how_many = f"{len(starts)} times (starting on lines {numbers})"
    else:
        # count() skips overlapping matches, so it is a lower bound; both are linear.
        total = max(text.count(needle), len(starts))
        how_many = (f"at least {total:,} times (the first {_LISTED_OCCURRENCES} start on "
                    f"lines {numbers})")
    return (f"old_str occurs {how_many} in {virtual}. Include more surrounding text so it "
            "matches exactly once.")


def _check_range(path: str, view_range: list[int], count: int) -> tuple[int, int]:
    valid = f"{path} has {count} lines: give [start, end] with 1 <= start <= end <= {count}, " \
        "or end = -1 for the rest of the file."
    if count == 0:
        raise ToolError(f"{path} is empty; view it without view_range.")
    if len(view_range) != 2:
        raise ToolError(f"view_range must have two numbers. {valid}")
    start, end = view_range
    if end == -1:
        end = count
    if not 1 <= start <= count or not start <= end <= count:
        raise ToolError(f"view_range {view_range} is out of range. {valid}")
    return start, end


def _set_name(text: str, stem: str) -> str:
    """Point the frontmatter ``name`` at a new stem, leaving every other byte alone.

    The ``name:`` line is rewritten in place; a header too unusual for that (no
    such line, or a quoted key) is re-rendered instead. A file without a usable
    header is left as it is.
    """
    parsed = parse_file(text)
    if parsed.frontmatter is None:
        return text
    lines = text.split("\n")
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r") == "---")
    header = "\n".join(lines[1:close])
    new_header, count = _NAME_LINE.subn(f"name: {stem}", header, count=1)
    if count == 1:
        new_text = "\n".join([lines[0], new_header, *lines[close:]])
        check = parse_file(new_text, stem).frontmatter
        if check is not None and check.name == stem:
            return new_text
    fm = parsed.frontmatter.model_copy(update={"name": stem})
    return render_file(fm, parsed.body)


def read_specs(store: Store) -> list[ToolSpec]:
    """The read tools over ``store``: view, grep, toc and section_read."""
    commands = MemoryCommands(store)
    return [
        tool_spec(commands.view),
        tool_spec(grep_tool(store), name="grep"),
        tool_spec(toc_tool(store), name="toc"),
        tool_spec(section_read_tool(store), name="section_read"),
    ]


def read_set(store: Store) -> ToolSet:
    """The ``read`` set: view, grep, toc, section_read."""
    return ToolSet("read", read_specs(store))


def write_set(store: Store, *, versions: bool = False) -> ToolSet:
    """The ``write`` set: the memory command set plus grep.

    Args:
        store: The store the tools read and change.
        versions: Report file versions and accept ``expected_version`` on edits
            (see :mod:`memdir.tools._versioned`); off in the paper's harnesses.
    """
    commands = MemoryCommands(store)
    if versions:
        from memdir.tools._versioned import VersionedCommands  # imports this module

        commands = VersionedCommands(store)
    return ToolSet(
        "write",
        [
            tool_spec(commands.view),
            tool_spec(commands.create),
            tool_spec(commands.str_replace),
            tool_spec(commands.insert),
            tool_spec(commands.delete),
            tool_spec(commands.rename),
            tool_spec(grep_tool(store), name="grep"),
        ],
    )


def folder_set(store: Store) -> ToolSet:
    """The ``folder`` set: view, grep, and a rename that only moves (content never changes)."""
    commands = MemoryCommands(store)
    return ToolSet(
        "folder",
        [
            tool_spec(commands.view),
            tool_spec(grep_tool(store), name="grep"),
            tool_spec(commands.move, name="rename"),
        ],
    )
