"""The memory commands as Anthropic's reference memory tool runs them, over a memdir store.

Claude is trained on the ``memory_20250818`` tool as the Anthropic SDK's
``BetaLocalFilesystemMemoryTool`` implements it: files of any name and without
frontmatter, ``..`` folded into the path, lenient ``view_range``, folders that
stay when emptied, and result texts of a fixed shape. :class:`AnthropicMemoryCommands`
gives the same outcome and the same text for every command that tool accepts,
while keeping memdir's confinement: every path is checked by the store
(:func:`memdir.store.resolve` with the ``ANY_NAME`` policy), so nothing leaves the root,
no symbolic link is followed out of it or read through, hidden names stay
reserved for memdir's own state, and writes are atomic under the store's lock
and within its size cap.

Where memdir deliberately answers differently, the reason is listed in
``tests/tools/test_anthropic_differential.py`` (``DELIBERATE``).
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from memdir.store import ANY_NAME, ROOT, Store, StoreError, StorePath, atomic_write, resolve
from memdir.tools._spec import ToolError, tool_flags

__all__ = ["AnthropicMemoryCommands"]

_MAX_LINES: Final = 999_999
_WIDTH: Final = len(str(_MAX_LINES))
_LISTING_DEPTH: Final = 2


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

    # -- paths ---------------------------------------------------------------

    def _locate(self, path: object) -> StorePath:
        if not isinstance(path, str) or not path.startswith(ROOT):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        rest = path[len(ROOT) :]
        if path != path.rstrip():
            raise ToolError(f"Path {path!r} ends in whitespace; remove it from the name.")
        if rest and not rest.startswith("/"):
            # The reference reads /memoriesX as /memories/X; memdir does not guess.
            raise ToolError(f"Path must be {ROOT} or start with {ROOT}/, got: {path}")
        folded = posixpath.normpath(ROOT + "/" + rest.lstrip("/"))
        if folded != ROOT and not folded.startswith(ROOT + "/"):
            raise ToolError(f"Path {path} would escape {ROOT} directory")
        try:
            return resolve(self.store.root, folded, "any", ANY_NAME)
        except StoreError as exc:
            raise ToolError(str(exc)) from None

    def _read(self, target: StorePath, path: str) -> str:
        try:
            fd = os.open(target.host, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            raise ToolError(_missing(path)) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ToolError(_link_refused(path)) from None
            raise
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ToolError(f"The path {path} is not a file.")
            data = handle.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"{path} is not UTF-8 text, so the memory tool cannot show or edit it; "
                "delete it or rename it out of the way."
            ) from None

    def _write(self, target: StorePath, text: str) -> None:
        data = text.encode("utf-8")
        if len(data) > self.store.max_file_bytes:
            raise ToolError(
                f"The new content of {target.virtual} would be {len(data):,} bytes, over the "
                f"store's cap of {self.store.max_file_bytes:,} bytes per file. Split it into "
                "several files."
            )
        atomic_write(target.host, data)
        self.store.note_change()

    def _make_parents(self, target: StorePath) -> None:
        """Create the missing folders above ``target``, as the reference does first.

        A file on the way stops it quietly (the reference's write then fails);
        :meth:`_check_parent` says so once nothing else is wrong.
        """
        parent = target.host.parent
        missing: list[Path] = []
        while not os.path.lexists(parent):
            missing.append(parent)
            parent = parent.parent
        if parent.is_dir() and not parent.is_symlink():
            for folder in reversed(missing):
                folder.mkdir(exist_ok=True)

    def _check_parent(self, target: StorePath) -> None:
        parent = target.host.parent
        if not parent.is_dir() or parent.is_symlink():
            while not os.path.lexists(parent):
                parent = parent.parent
            raise ToolError(
                f"{self.store.virtual(parent)} is a file, so it cannot hold other files; "
                "choose a path whose folders are folders."
            )

    # -- commands ------------------------------------------------------------

    @tool_flags(read_only=True)
    async def view(self, path: str, view_range: list[int] | None = None) -> str:
        """Show a memory file with numbered lines, or list a folder two levels deep.

        Args:
            path: A file or folder under /memories, e.g. /memories or /memories/notes.xml.
            view_range: Optional [start, end] line numbers of a file, 1-based and
                inclusive; end -1 means to the end of the file.
        """
        target = self._locate(path)
        try:
            leaf = os.lstat(target.host)
        except (FileNotFoundError, NotADirectoryError):
            raise ToolError(_missing(path)) from None
        if stat.S_ISLNK(leaf.st_mode):
            raise ToolError(_link_refused(path))
        if stat.S_ISDIR(leaf.st_mode):
            return self._listing(target.host, path, leaf.st_size)
        if not stat.S_ISREG(leaf.st_mode):
            raise ToolError(f"Unsupported file type for {path}")
        lines = self._read(target, path).split("\n")
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
        return f"Here's the content of {path} with line numbers:\n" + _numbered(lines, first)

    def _listing(self, folder: Path, path: str, size: int) -> str:
        rows = [f"{_size(size)}\t{path}"]

        def collect(host: Path, prefix: str, depth: int) -> None:
            try:
                children = sorted(os.scandir(host), key=lambda entry: entry.name)
            except OSError:
                return
            for child in children:
                if child.name.startswith(".") or child.is_symlink():
                    continue
                rel = f"{prefix}{child.name}"
                if child.is_dir(follow_symlinks=False):
                    rows.append(f"{_size(child.stat().st_size)}\t{path}/{rel}/")
                    if depth < _LISTING_DEPTH:
                        collect(Path(child.path), rel + "/", depth + 1)
                elif child.is_file(follow_symlinks=False):
                    rows.append(f"{_size(child.stat().st_size)}\t{path}/{rel}")

        collect(folder, "", 1)
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
        target = self._locate(path)
        if not isinstance(file_text, str):
            raise ToolError("create needs file_text: the text of the new file.")
        with self.store.locked():
            self._make_parents(target)
            if os.path.lexists(target.host):
                raise ToolError(f"File {path} already exists")
            self._check_parent(target)
            self._write(target, file_text)
        return f"File created successfully at: {path}"

    def _existing_file(self, path: str) -> StorePath:
        target = self._locate(path)
        if target.host.is_symlink():
            raise ToolError(_link_refused(path))
        if not target.host.exists():
            raise ToolError(_missing(path))
        if not target.host.is_file():
            raise ToolError(f"The path {path} is not a file.")
        return target

    @tool_flags(read_only=False, destructive=True)
    async def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """Replace the one exact occurrence of old_str in a memory file with new_str.

        Args:
            path: The file to edit, e.g. /memories/progress.md.
            old_str: The exact text to replace; it must appear exactly once.
            new_str: The text to put in its place (may be empty).
        """
        target = self._existing_file(path)
        if not isinstance(old_str, str) or not isinstance(new_str, str):
            raise ToolError("str_replace needs old_str and new_str, both text.")
        with self.store.locked():
            content = self._read(target, path)
            count = content.count(old_str)
            if count == 0:
                raise ToolError(
                    f"No replacement was performed, old_str `{old_str}` did not appear "
                    f"verbatim in {path}."
                )
            if count > 1:
                starts, at = [], content.find(old_str)
                while at != -1:
                    starts.append(str(content.count("\n", 0, at) + 1))
                    at = content.find(old_str, at + 1)
                raise ToolError(
                    f"No replacement was performed. Multiple occurrences of old_str `{old_str}` "
                    f"in lines: {', '.join(starts)}. Please ensure it is unique"
                )
            changed = content.count("\n", 0, content.find(old_str))
            new_content = content.replace(old_str, new_str)
            self._write(target, new_content)
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
        target = self._existing_file(path)
        if not isinstance(insert_line, int) or not isinstance(insert_text, str):
            raise ToolError("insert needs insert_line (a whole number) and insert_text (text).")
        with self.store.locked():
            lines = _lines_keeping_cr(self._read(target, path))
            if insert_line < 0 or insert_line > len(lines):
                raise ToolError(
                    f"Invalid `insert_line` parameter: {insert_line}. "
                    f"It should be within the range [0, {len(lines)}]."
                )
            lines.insert(insert_line, insert_text.rstrip("\n"))
            new_content = "\n".join(lines)
            self._write(target, new_content if new_content.endswith("\n") else new_content + "\n")
        return f"The file {path} has been edited."

    @tool_flags(read_only=False, destructive=True)
    async def delete(self, path: str) -> str:
        """Delete a memory file, or a folder with everything in it.

        Args:
            path: The file or folder to delete, e.g. /memories/old.
        """
        target = self._locate(path)
        if target.is_root:
            raise ToolError(f"Cannot delete the {ROOT} directory itself")
        with self.store.locked():
            if target.host.is_symlink() or target.host.is_file():
                target.host.unlink()  # a link goes, never what it points to
            elif target.host.is_dir():
                shutil.rmtree(target.host)
            else:
                raise ToolError(f"The path {path} does not exist")
            self.store.note_change()
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
        if src.is_root:
            raise ToolError(f"Cannot rename the {ROOT} directory itself")
        with self.store.locked():
            if os.path.lexists(dst.host):
                raise ToolError(f"The destination {new_path} already exists")
            self._make_parents(dst)
            if not os.path.lexists(src.host):
                raise ToolError(f"The path {old_path} does not exist")
            self._check_parent(dst)
            if src.host.is_dir() and (dst.virtual + "/").startswith(src.virtual + "/"):
                raise ToolError(f"Cannot move {old_path} inside itself; choose a path outside it.")
            os.rename(src.host, dst.host)
            self.store.note_change()
        return f"Successfully renamed {old_path} to {new_path}"


def _missing(path: str) -> str:
    return f"The path {path} does not exist. Please provide a valid path."


def _link_refused(path: str) -> str:
    return (
        f"{path} is a symbolic link, and memdir never reads or writes through links; "
        "use the path of the file itself."
    )
