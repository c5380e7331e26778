"""The foldered store's guarantee: the dump's files, moved, every byte unchanged.

Files are matched by content hash: each file of the dump must appear exactly
once with identical bytes, and nothing else may be in the store. Where a
missing file and an unexpected one share a file name, the report calls it a
changed file, which is what it almost always is.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from memdir.builders._record import BuildError, Move
from memdir.store import Store

__all__ = ["FolderingReport", "store_bytes", "verify_foldering"]


@dataclass(frozen=True)
class FolderingReport:
    """A verified foldering: the files that moved and the folders the store now has."""

    moves: list[Move]
    folders: list[str]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def store_bytes(store: Store) -> dict[str, bytes]:
    """Every regular file of the store, markdown or not, as path -> bytes.

    Read through :meth:`Store.capture`; hidden names (and the temporary files of
    atomic writes) are left out, as the store's own walk leaves them out.
    """
    files, _folders = store.capture()
    return {path: data for path, data in files.items()
            if not any(part.startswith(".") for part in path.split("/"))}


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def verify_foldering(store: Store, dump: list[tuple[str, str]]) -> FolderingReport:
    """Check that ``store`` holds exactly the ``dump``'s files, byte for byte, anywhere.

    Args:
        store: The foldered store.
        dump: The verbatim dump as (store path, text) pairs (:func:`verbatim_files`).

    Raises:
        BuildError: A dump file is missing, changed or duplicated, or an extra file
            exists; the message names every such file.
    """
    by_hash: dict[str, list[str]] = defaultdict(list)
    for path, text in dump:
        by_hash[_digest(text.encode("utf-8"))].append(path)
    unmatched = {h: list(paths) for h, paths in by_hash.items()}
    moves: list[Move] = []
    extra: list[str] = []
    duplicated: list[str] = []
    for path, data in sorted(store_bytes(store).items()):
        digest = _digest(data)
        if digest not in by_hash:
            extra.append(path)
        elif not unmatched[digest]:
            duplicated.append(path)
        else:
            old = unmatched[digest].pop(0)
            if old != path:
                moves.append(Move(old=old, new=path))
    missing = sorted(p for paths in unmatched.values() for p in paths)
    _raise_if_broken(missing, extra, duplicated)
    folders = [e.path for e in store.walk(describe=False) if e.is_dir]
    return FolderingReport(moves, folders)


def _raise_if_broken(missing: list[str], extra: list[str], duplicated: list[str]) -> None:
    if not (missing or extra or duplicated):
        return
    extra_names = {_name(p): p for p in extra}
    changed = [f"{old} (now {extra_names[_name(old)]})" for old in missing
               if _name(old) in extra_names]
    changed_new = {extra_names[_name(old)] for old in missing if _name(old) in extra_names}
    gone = [p for p in missing if _name(p) not in extra_names]
    added = [p for p in extra if p not in changed_new]
    parts = []
    if changed:
        parts.append("changed: " + ", ".join(changed))
    if gone:
        parts.append("missing: " + ", ".join(gone))
    if added:
        parts.append("not from the dump: " + ", ".join(added))
    if duplicated:
        parts.append("duplicated: " + ", ".join(duplicated))
    raise BuildError(
        "the foldered store is not the verbatim dump moved into folders ("
        + "; ".join(parts) + "); a foldering may only move files, so this build is rejected"
    )
