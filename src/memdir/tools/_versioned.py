"""The memory commands with an optional version precondition, for agents that want it.

With versions on, ``view`` of a file names its version (a digest of its
content), every change reports the file's new version, and ``str_replace``,
``insert`` and ``delete`` accept ``expected_version``: when given, the change is
made only if the file is still at that version, so an agent's read-modify-write
cannot silently overwrite a change someone else made in between. It is off by
default: the paper's harnesses keep their tool schemas (and digests) unchanged.
"""

from __future__ import annotations

from memdir.store import ANY_VERSION, AnyVersion
from memdir.tools._memory import MemoryCommands
from memdir.tools._spec import tool_flags

__all__ = ["VersionedCommands"]


def _expect(expected_version: str | None) -> str | AnyVersion:
    return ANY_VERSION if expected_version is None else expected_version.strip()


class VersionedCommands(MemoryCommands):
    """:class:`MemoryCommands` whose results carry versions and whose edits can require one."""

    def _stamp(self, text: str, path: str) -> str:
        version = self.store.version(path)
        return f"{text}\n[version {version}]" if version is not None else text

    @tool_flags(read_only=True)
    async def view(self, path: str, view_range: list[int] | None = None) -> str:
        """Show a memory file with numbered lines and its version, or list a folder.

        For a file: every line of it (frontmatter included) is prefixed by its line
        number and a tab, and the last line names the file's current version
        (pass it as expected_version to an edit so that the edit is refused if the
        file changed meanwhile). Long files are cut off with a note; read further
        with view_range. For a folder (/memories is the root): the tree of folders
        and files, each file with its size and its one-line description.

        Args:
            path: A file or folder under /memories, e.g. /memories or
                /memories/people/alice.md.
            view_range: Optional [start, end] line numbers of a file to show, 1-based and
                inclusive; end -1 means to the end of the file. Ignored for folders.
        """
        text, version = self._view(path, view_range)
        return text if version is None else f"{text}\n[version {version}]"

    @tool_flags(read_only=False)
    async def create(self, path: str, file_text: str) -> str:  # noqa: D102 - same text
        result = await super().create(path, file_text)
        return self._stamp(result, self.store.resolve(path, "file").virtual)

    create.__doc__ = MemoryCommands.create.__doc__

    @tool_flags(read_only=False, destructive=True)
    async def str_replace(
        self, path: str, old_str: str, new_str: str, expected_version: str | None = None
    ) -> str:
        """Replace one exact passage of a memory file with new text.

        old_str must occur exactly once in the file, matching character for
        character (spaces, line breaks and all); include a few surrounding words if
        the passage repeats. Do not include the line-number prefixes view shows.
        To delete a passage, pass an empty new_str. The frontmatter header must
        remain valid after the edit. The result names the file's new version.

        Args:
            path: The file to edit, e.g. /memories/people/alice.md.
            old_str: The exact text to replace; it must appear exactly once.
            new_str: The text to put in its place (may be empty).
            expected_version: The version view showed; if the file has changed since,
                nothing is changed and the error says so. Leave it out to skip the check.
        """
        virtual = self.store.resolve(path, "file").virtual
        result = await self._str_replace(path, old_str, new_str, _expect(expected_version))
        return self._stamp(result, virtual)

    @tool_flags(read_only=False)
    async def insert(
        self, path: str, insert_line: int, insert_text: str, expected_version: str | None = None
    ) -> str:
        """Insert text into a memory file after a given line.

        insert_line 0 puts the text before the first line; insert_line n (the
        number of lines) appends it at the end. Line numbers are the ones view
        shows. Inserting above the frontmatter header is refused. The result names
        the file's new version.

        Args:
            path: The file to edit, e.g. /memories/people/alice.md.
            insert_line: The line after which to insert, from 0 to the file's line count.
            insert_text: The text to insert; it becomes one or more whole lines.
            expected_version: The version view showed; if the file has changed since,
                nothing is changed and the error says so. Leave it out to skip the check.
        """
        virtual = self.store.resolve(path, "file").virtual
        result = await self._insert(path, insert_line, insert_text, _expect(expected_version))
        return self._stamp(result, virtual)

    @tool_flags(read_only=False, destructive=True)
    async def delete(self, path: str, expected_version: str | None = None) -> str:
        """Delete a memory file, or a folder with everything inside it.

        Deletion cannot be undone; prefer editing a file when only part of it is
        out of date. The root /memories cannot be deleted.

        Args:
            path: The file or folder to delete, e.g. /memories/old/notes.md.
            expected_version: For a file, the version view showed; if the file has
                changed since, it is not deleted. Leave it out to skip the check.
        """
        return await self._delete(path, _expect(expected_version))
