"""The memory commands as Anthropic's reference memory tool runs them, over a memdir store.

Claude is trained on the ``memory_20250818`` tool as the Anthropic SDK's
``BetaLocalFilesystemMemoryTool`` implements it: files of any name and without
frontmatter, ``..`` folded into the path, lenient ``view_range``, folders that
stay when emptied, and result texts of a fixed shape. :class:`AnthropicMemoryCommands`
gives the same outcome and the same text for every command that tool accepts,
while keeping memdir's confinement. Every path is checked by the store (any
file name, no hidden or ``..`` component), and every act goes through the
store's directory handles (:class:`memdir.store.Entries`): folders are opened
one at a time from the root without following a link, and the read, write,
delete or rename happens relative to the last folder's handle. So nothing
leaves the root, no symbolic link is followed or read through, a process that
swaps a folder for a link while a command runs cannot redirect it, hidden
names stay reserved for memdir's own state, and writes are atomic under the
store's lock and within its size cap.

Where memdir deliberately answers differently, the reason is listed in
``tests/tools/test_anthropic_differential.py`` (``DELIBERATE``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Final

from memdir.store import (
    ROOT,
    Entries,
    Folder,
    NotFoundError,
    PathError,
    Store,
    StoreError,
    check_new_path,
    conflict_note,
    to_virtual,
)
from memdir.tools._limits import remaining
from memdir.tools._spec import ToolError, tool_flags

__all__ = ["AnthropicMemoryCommands"]

_MAX_LINES: Final = 999_999
_WIDTH: Final = len(str(_MAX_LINES))
_LISTING_DEPTH: Final = 2
_EDIT_ATTEMPTS: Final = 3
_LISTED_CHARS: Final = 4000
"""Longest list of line numbers a str_replace error gives (the error cap is 4,000)."""


def _size(count: int) -> str:
    """A size the way the reference listing writes it: ``0B``, ``812B``, ``4.0K``."""
    if count == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    index = min((count.bit_length() - 1) // 10, len(units) - 1)
    value = count / (1024**index)
    return f"{int(value)}{units[index]}" if value == int(value) else f"{value:.1f}{units[index]}"


def _numbered(lines: Sequence[str], first: int) -> str:
    return "\n".join(f"{str(n).rjust(_WIDTH)}\t{line}" for n, line in enumerate(lines, first))


def _lines_keeping_cr(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class AnthropicMemoryCommands:
    """The six memory commands with the reference tool's semantics and texts.

    Every method returns the text for the model or raises
    :class:`~memdir.tools.ToolError` (a mistake the model can correct; the
    message is the reference's wording wherever the reference has one).

    Args:
        store: The store that holds the files (seen as ``/memories``).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.entries = Entries(store)

    # -- paths ---------------------------------------------------------------

    def _locate(self, path: object) -> tuple[str, ...]:
        """The components below the root of a path as the reference reads it."""
        if not isinstance(path, str) or not path.startswith(ROOT):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        rest = path[len(ROOT) :]
        if rest and not rest.startswith("/"):
            # The reference reads /memoriesX as /memories/X; memdir does not guess.
            raise ToolError(f"Path must be {ROOT} or start with {ROOT}/, got: {path}")
        folded = posixpath.normpath(ROOT + "/" + rest.lstrip("/"))
        if folded != ROOT and not folded.startswith(ROOT + "/"):
            raise ToolError(f"Path {path} would escape {ROOT} directory")
        try:
            return self.entries.split(folded)
        except StoreError as exc:
            raise ToolError(str(exc)) from None

    def _text(self, folder: Folder, name: str, path: str) -> str:
        return self._text_of(folder.read(name), path)

    @staticmethod
    def _text_of(data: bytes, path: str) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"{path} is not UTF-8 text, so the memory tool cannot show or edit it; "
                "delete it or rename it out of the way."
            ) from None

    def _blocked(self, parts: tuple[str, ...]) -> ToolError:
        """The error for a file where a folder above ``parts`` should be."""
        found = self.entries.blocker(parts[:-1])
        where = found.virtual if found is not None else to_virtual(parts[:-1])
        return ToolError(
            f"{where} is a file, so it cannot hold other files; "
            "choose a path whose folders are folders."
        )

    def _check_new(self, parts: tuple[str, ...], below: tuple[int, int] = (0, 0)) -> None:
        """Refuse a new entry too deep or too long for the store; an existing one passes."""
        try:
            check_new_path(parts, below)
        except PathError as exc:
            if self.entries.lookup(parts) is None:
                raise ToolError(str(exc)) from None

    def _extent(self, parts: tuple[str, ...]) -> tuple[int, int]:
        """The depth and length of the paths inside the folder ``parts`` (0, 0 otherwise)."""
        found = self.entries.lookup(parts)
        if found is None or found.type != "dir":
            return 0, 0
        with self.entries.folder(parts) as folder:
            return folder.extent()

    @contextmanager
    def _existing_file(self, path: str) -> Iterator[tuple[Folder, str]]:
        """The folder holding the regular file ``path`` and its name; anything else is refused."""
        parts = self._locate(path)
        if not parts:
            raise ToolError(f"The path {path} is not a file.")
        with _tool_errors(_missing(path)), self.entries.folder(parts[:-1]) as folder:
            found = folder.lookup(parts[-1])
            if found is None:
                raise ToolError(_missing(path))
            if found.type == "link":
                raise ToolError(_link_refused(path))
            if found.type != "file":
                raise ToolError(f"The path {path} is not a file.")
            yield folder, parts[-1]

    # -- commands ------------------------------------------------------------

    @tool_flags(read_only=True)
    async def view(self, path: str, view_range: list[int] | None = None) -> str:
        """Show a memory file with numbered lines, or list a folder two levels deep.

        Args:
            path: A file or folder under /memories, e.g. /memories or /memories/notes.xml.
            view_range: Optional [start, end] line numbers of a file, 1-based and
                inclusive; end -1 means to the end of the file.
        """
        parts = self._locate(path)
        with _tool_errors(_missing(path)):
            if not parts:
                with self.entries.folder(()) as root:
                    return self._listing(root, path)
            with self.entries.folder(parts[:-1]) as parent:
                found = parent.lookup(parts[-1])
                if found is None:
                    raise ToolError(_missing(path))
                if found.type == "link":
                    raise ToolError(_link_refused(path))
                if found.type == "dir":
                    with parent.child(parts[-1]) as folder:
                        return self._listing(folder, path)
                if found.type != "file":
                    raise ToolError(f"Unsupported file type for {path}")
                text = self._text(parent, parts[-1], path)
                lines = text.split("\n")
        if len(lines) > _MAX_LINES:
            raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
        first = 1
        if isinstance(view_range, Sequence) and len(view_range) == 2:
            low, high = view_range
            if not isinstance(low, int) or not isinstance(high, int):
                raise ToolError(
                    f"view_range must be two whole numbers [start, end], got {list(view_range)}; "
                    "use end -1 to read to the end of the file."
                )
            start = max(1, low) - 1
            lines = lines[start : len(lines) if high == -1 else high]
            first = start + 1
        return (f"Here's the content of {path} with line numbers:\n" + _numbered(lines, first)
                + conflict_note(path, text))

    def _listing(self, folder: Folder, path: str) -> str:
        rows = [f"{_size(folder.itself().size)}\t{path}"]
        for found in folder.listing(_LISTING_DEPTH):
            rel = "/".join(found.parts[len(folder.parts) :])
            if found.type == "dir":
                rows.append(f"{_size(found.size)}\t{path}/{rel}/")
            elif found.type == "file":
                rows.append(f"{_size(found.size)}\t{path}/{rel}")
        header = (
            f"Here're the files and directories up to 2 levels deep in {path}, "
            "excluding hidden items:"
        )
        return header + "\n" + "\n".join(rows)

    @tool_flags(read_only=False)
    async def create(self, path: str, file_text: str) -> str:
        """Create a new memory file; folders on the way are created, an existing file is kept.

        Args:
            path: The new file's path under /memories, e.g. /memories/progress.md.
            file_text: The complete text of the file.
        """
        parts = self._locate(path)
        if not isinstance(file_text, str):
            raise ToolError("create needs file_text: the text of the new file.")
        if not parts:
            raise ToolError(f"File {path} already exists")
        self._check_new(parts)
        # Folders on the way are made first, as the reference does.
        with (self.store.locked(), _tool_errors(_missing(path)),
              self._make_parents(parts) as folder):
            if folder.lookup(parts[-1]) is not None:
                raise ToolError(f"File {path} already exists")
            folder.write(parts[-1], file_text.encode("utf-8"))
        return f"File created successfully at: {path}"

    @contextmanager
    def _make_parents(self, parts: tuple[str, ...]) -> Iterator[Folder]:
        """The folder to hold ``parts``, its missing folders made, as the reference does first.

        A file on the way stops it (nothing is made, since everything above a file
        exists); that is reported as the reference's write would fail.
        """
        with ExitStack() as stack:
            try:
                folder = stack.enter_context(self.entries.folder(parts[:-1], create=True))
            except NotFoundError:
                raise self._blocked(parts) from None
            yield folder

    def _edit(self, path: str, change: Callable[[str], str]) -> str:
        """Apply ``change`` to the text of the existing file ``path``; return the new text.

        ``change`` runs outside the store's lock (it may be CPU work on a large
        file); the result is written under the lock only if the file still holds
        the bytes ``change`` saw, and otherwise computed again on what it holds
        now. ``change`` raises ToolError to refuse; nothing is written then.
        """
        for attempt in range(_EDIT_ATTEMPTS + 1):
            last = attempt == _EDIT_ATTEMPTS
            with ExitStack() as stack:
                if last:  # still racing after several tries: hold the lock throughout
                    stack.enter_context(self.store.locked())
                folder, name = stack.enter_context(self._existing_file(path))
                data = folder.read(name)
                new_content = change(self._text_of(data, path))
                remaining()  # out of time: stop here, before anything is written
                if not last:
                    stack.enter_context(self.store.locked())
                    folder, name = stack.enter_context(self._existing_file(path))
                    if folder.read(name) != data:
                        continue  # another writer changed it meanwhile
                folder.write(name, new_content.encode("utf-8"))
                return new_content
        raise AssertionError("unreachable: the last attempt writes or raises")

    @tool_flags(read_only=False, destructive=True)
    async def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """Replace the one exact occurrence of old_str in a memory file with new_str.

        Args:
            path: The file to edit, e.g. /memories/progress.md.
            old_str: The exact text to replace; it must appear exactly once.
            new_str: The text to put in its place (may be empty).
        """
        changed = 0

        def change(content: str) -> str:
            nonlocal changed
            if not isinstance(old_str, str) or not isinstance(new_str, str):
                raise ToolError("str_replace needs old_str and new_str, both text.")
            count = content.count(old_str)
            if count == 0:
                raise ToolError(
                    f"No replacement was performed, old_str `{old_str}` did not appear "
                    f"verbatim in {path}."
                )
            if count > 1:
                raise ToolError(
                    f"No replacement was performed. Multiple occurrences of old_str `{old_str}` "
                    f"in lines: {_occurrence_lines(content, old_str)}. Please ensure it is unique"
                )
            changed = content.count("\n", 0, content.find(old_str))
            return content.replace(old_str, new_str)

        new_content = self._edit(path, change)
        lines = new_content.split("\n")
        start = max(0, changed - 2)
        snippet = _numbered(lines[start : min(len(lines), changed + 3)], start + 1)
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n" + snippet
        )

    @tool_flags(read_only=False)
    async def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        """Insert text as whole lines into a memory file after a given line.

        Args:
            path: The file to edit, e.g. /memories/progress.md.
            insert_line: The line after which to insert: 0 for the top, the line
                count for the end.
            insert_text: The text to insert.
        """

        def change(content: str) -> str:
            if not isinstance(insert_line, int) or not isinstance(insert_text, str):
                raise ToolError(
                    "insert needs insert_line (a whole number) and insert_text (text)."
                )
            lines = _lines_keeping_cr(content)
            if insert_line < 0 or insert_line > len(lines):
                raise ToolError(
                    f"Invalid `insert_line` parameter: {insert_line}. "
                    f"It should be within the range [0, {len(lines)}]."
                )
            lines.insert(insert_line, insert_text.rstrip("\n"))
            new_content = "\n".join(lines)
            if not new_content.endswith("\n"):
                new_content += "\n"
            return new_content

        self._edit(path, change)
        return f"The file {path} has been edited."

    @tool_flags(read_only=False, destructive=True)
    async def delete(self, path: str) -> str:
        """Delete a memory file, or a folder with everything in it.

        Args:
            path: The file or folder to delete, e.g. /memories/old.
        """
        parts = self._locate(path)
        if not parts:
            raise ToolError(f"Cannot delete the {ROOT} directory itself")
        missing = f"The path {path} does not exist"
        with (self.store.locked(), _tool_errors(missing),
              self.entries.folder(parts[:-1]) as folder):
            found = folder.lookup(parts[-1])
            if found is None or found.type == "special":
                raise ToolError(missing)
            folder.remove(parts[-1])  # a link goes, never what it points to
        return f"Successfully deleted {path}"

    @tool_flags(read_only=False)
    async def rename(self, old_path: str, new_path: str) -> str:
        """Rename or move a memory file or folder; the destination must not exist.

        Args:
            old_path: The file or folder to move, e.g. /memories/draft.md.
            new_path: Where it goes, e.g. /memories/done/draft.md.
        """
        src = self._locate(old_path)
        dst = self._locate(new_path)
        if not src:
            raise ToolError(f"Cannot rename the {ROOT} directory itself")
        missing = f"The path {old_path} does not exist"
        with self.store.locked(), _tool_errors(missing), ExitStack() as stack:
            if self.entries.lookup(dst) is not None:
                raise ToolError(f"The destination {new_path} already exists")
            self._check_new(dst, self._extent(src))
            into: Folder | None = None
            try:  # the destination's folders are made first, as the reference does
                into = stack.enter_context(self.entries.folder(dst[:-1], create=True))
            except NotFoundError:
                pass  # a file on the way: reported once the source is known to exist
            try:
                folder = stack.enter_context(self.entries.folder(src[:-1]))
                found = folder.lookup(src[-1])
            except NotFoundError:
                found = None
            if found is None:
                raise ToolError(missing)
            if into is None:
                raise self._blocked(dst)
            if found.type == "dir" and (to_virtual(dst) + "/").startswith(to_virtual(src) + "/"):
                raise ToolError(f"Cannot move {old_path} inside itself; choose a path outside it.")
            folder.move(src[-1], into, dst[-1])
        return f"Successfully renamed {old_path} to {new_path}"


@contextmanager
def _tool_errors(missing: str) -> Iterator[None]:
    """Store errors inside the block as tool errors; a missing entry gets ``missing``."""
    try:
        yield
    except NotFoundError:
        raise ToolError(missing) from None
    except StoreError as exc:
        raise ToolError(str(exc)) from None


def _occurrence_lines(content: str, needle: str) -> str:
    """The starting line of each occurrence of ``needle``, as the reference lists them.

    The reference finds each occurrence from the one before plus one character
    (so overlapping ones count, and an empty needle occurs at every position)
    and counts the line breaks before each from the top. Here the line breaks
    are counted once across the text, so the listing is linear in the text; it
    stops after :data:`_LISTED_CHARS` characters with ``...``, since the whole
    message is cut at the error cap anyway.
    """
    numbers: list[str] = []
    size = 0
    line, seen = 1, 0
    at = content.find(needle)
    while at != -1:
        if size > _LISTED_CHARS:
            numbers.append("...")
            break
        line += content.count("\n", seen, at)
        seen = at
        numbers.append(str(line))
        size += len(numbers[-1]) + 2
        at = content.find(needle, at + 1)
    return ", ".join(numbers)


def _missing(path: str) -> str:
    return f"The path {path} does not exist. Please provide a valid path."


def _link_refused(path: str) -> str:
    return (
        f"{path} is a symbolic link, and memdir never reads or writes through links; "
        "use the path of the file itself."
    )
