"""The /memories listing: one names-only walk, kept between calls while nothing changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memdir.store import Store
from memdir.tools._view import render_listing

DOC = "---\nname: {name}\ndescription: About {name}.\n---\nBody.\n"


def _store(root: Path, folders: int = 40, files: int = 10) -> Store:
    store = Store(root, create=True)
    for f in range(folders):
        for k in range(files):
            store.write(f"/memories/f{f:02}/sub/n{k}.md", DOC.format(name=f"n{k}"))
    return store


def test_a_listing_again_walks_nothing_until_something_changes(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    root = store.resolve("/memories", "dir")
    code = (
        "import os, sys\n"
        "from memdir.store import Store\n"
        "from memdir.tools._view import render_listing\n"
        "store = Store(sys.argv[1], sweep_now=False)\n"
        "top = store.resolve('/memories', 'dir')\n"
        "seen = []\n"
        "sys.addaudithook(lambda e, a: seen.append(e) if e == 'os.scandir' else None)\n"
        "counts = []\n"
        "for step in range(5):\n"
        "    if step == 4:\n"
        "        os.mkdir(os.path.join(sys.argv[1], 'new'))\n"
        "        open(os.path.join(sys.argv[1], 'new', 'x.md'), 'w').write('hi')\n"
        "    before = len(seen)\n"
        "    out = render_listing(store, top)\n"
        "    counts.append(len(seen) - before)\n"
        "print(*counts, 'new/' in out)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(store.root)], capture_output=True,
                          text=True, check=True)
    folders = 1 + 40 * 2
    # The first poll, outside one_call, starts the feed's watches (a listing of each
    # folder) before the walk (another); from then on the walk is kept, until the new
    # folder is seen (walked again, and the feed watches the new folder: one listing more).
    assert done.stdout.split() == [str(2 * folders), "0", "0", "0",
                                   str(folders + 2), "True"], done.stdout
    out = render_listing(store, root)
    assert "new/" in out and "x.md (2 B) - (no description)" in out


def test_an_edit_in_place_shows_its_new_description_and_size(tmp_path: Path) -> None:
    store = _store(tmp_path / "s", folders=2, files=2)
    top = store.resolve("/memories/f00", "dir")
    for _ in range(3):
        assert "n0.md (46 B) - About n0." in render_listing(store, top)
    path = store.root / "f00" / "sub" / "n0.md"
    stat = path.stat()
    with open(path, "r+") as handle:  # same size, mtime put back: only the feed sees it
        handle.write(DOC.format(name="m0"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "n0.md (46 B) - About m0." in render_listing(store, top)
    path.unlink()
    assert "n0.md" not in render_listing(store, top)
