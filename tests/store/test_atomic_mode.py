"""Files the store writes are their owner's only, and keep their bits across edits."""

from __future__ import annotations

import os
import stat

from memdir.store import Store

TEXT = "---\nname: note\ndescription: A note\n---\nbody\n"


def test_a_new_file_is_the_owners_only_whatever_the_umask(store: Store) -> None:
    old = os.umask(0o022)
    try:
        store.create("/memories/note.md", TEXT)
    finally:
        os.umask(old)
    mode = stat.S_IMODE((store.root / "note.md").stat().st_mode)
    assert mode == 0o600


def test_rewrite_keeps_existing_mode(store: Store) -> None:
    store.create("/memories/note.md", TEXT)
    host = store.root / "note.md"
    host.chmod(0o640)
    store.write("/memories/note.md", TEXT + "more\n")
    assert stat.S_IMODE(host.stat().st_mode) == 0o640
    assert host.read_text() == TEXT + "more\n"
