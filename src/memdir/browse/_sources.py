"""What a browser session shows: one store, a study run's stores, or a skills run's chains.

``open_target`` looks at a folder and decides: a study run (``cells/*/status.json``),
a skills run (``*/cell.json``), a build folder (``build.json`` beside ``memories/``)
or a plain store. Each store browsed is a :class:`BrowsedStore` with a URL-safe id
and, where it can be found, the conversation it was built from, so source
locators can link to their turns.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memdir.bench import DatasetError, load_benchmark
from memdir.conversation import Conversation, load_conversation
from memdir.store import Store

if TYPE_CHECKING:  # the run readers load inspect_ai: a plain store's session never needs them
    from memdir.skills import CellReport
    from memdir.study import RunRecords

__all__ = [
    "BrowseError",
    "BrowsedStore",
    "Catalog",
    "ConversationRef",
    "chain_store_id",
    "open_target",
    "slug",
]

Kind = Literal["store", "study", "skills"]

STORE_ID = "store"
"""The id of the one store of a session that browses a single store."""


class BrowseError(ValueError):
    """A folder that cannot be browsed; the message says what to give instead."""


@dataclass(frozen=True, slots=True)
class ConversationRef:
    """Where a store's conversation comes from: a benchmark's conversation, or a file."""

    benchmark: str | None
    conversation_id: str | None
    data_dir: Path | None
    file: Path | None = None

    def describe(self) -> str:
        """A short label, e.g. ``locomo conv-50``."""
        if self.file is not None:
            return str(self.file)
        return f"{self.benchmark} {self.conversation_id}"


_DATASETS: dict[tuple[str, str], Any] = {}
_DATASETS_LOCK = threading.Lock()


def _load(ref: ConversationRef) -> Conversation:
    if ref.file is not None:
        return load_conversation(ref.file)
    if ref.benchmark is None or ref.conversation_id is None:
        raise BrowseError("the conversation is not named")
    if ref.data_dir is None:
        raise BrowseError("no data folder is known; set MEMDIR_DATA_DIR or pass --data-dir")
    key = (ref.benchmark, str(ref.data_dir))
    with _DATASETS_LOCK:
        if key not in _DATASETS:
            _DATASETS[key] = load_benchmark(ref.benchmark, ref.data_dir)
        dataset = _DATASETS[key]
    for conversation in dataset.conversations:
        if conversation.id == ref.conversation_id:
            found: Conversation = conversation
            return found
    raise BrowseError(f"{ref.benchmark} in {ref.data_dir} has no conversation "
                      f"{ref.conversation_id}")


@dataclass
class BrowsedStore:
    """One store of the session, with where its conversation comes from.

    Attributes:
        id: The store's part of every URL.
        title: What the pages call it.
        store: The store, opened read-only in spirit (nothing here writes).
        conversation_ref: Where to find the source conversation, if known.
        origin: One line saying where the store comes from.
    """

    id: str
    title: str
    store: Store
    conversation_ref: ConversationRef | None = None
    origin: str = ""
    given: Conversation | None = None
    _conversation: Conversation | None = field(default=None, repr=False)
    _problem: str | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def conversation(self) -> tuple[Conversation | None, str | None]:
        """The source conversation (loaded once), or None and why it is not linked."""
        if self.given is not None:
            return self.given, None
        if self.conversation_ref is None:
            return None, "the store's source conversation is not known"
        with self._lock:
            if self._conversation is None and self._problem is None:
                try:
                    self._conversation = _load(self.conversation_ref)
                except (BrowseError, DatasetError, OSError, ValueError) as exc:
                    self._problem = (f"cannot load {self.conversation_ref.describe()}: "
                                     f"{exc}")
        return self._conversation, self._problem


@dataclass
class Catalog:
    """Everything one ``memdir browse`` session shows."""

    kind: Kind
    folder: Path
    title: str
    stores: dict[str, BrowsedStore]
    study: RunRecords | None = None
    skills: list[CellReport] | None = None
    data_dir: Path | None = None
    missing: dict[str, str] = field(default_factory=dict)
    """Stores the run records but that cannot be shown, each with why (by store key)."""
    report: Path | None = None
    """A study run's ``report/report.md``, when ``memdir study report`` has written it."""


def slug(text: str) -> str:
    """A URL-safe id for a store name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "store"


def _build_ref(store_root: Path, data_dir: Path | None) -> tuple[ConversationRef | None, str]:
    """The conversation of a build folder's store, read from its ``build.json``."""
    state_path = store_root.parent / "build.json"
    if not state_path.is_file():
        return None, ""
    from memdir.builders import BuildState

    try:
        state = BuildState.model_validate_json(state_path.read_text("utf-8"))
    except ValueError as exc:
        raise BrowseError(f"{state_path} is not a build state ({exc}); browse the store "
                          "folder itself with --conversation to link its locators") from None
    benchmark = state.record.benchmark if state.record is not None else None
    origin = f"{state.spec.variant} build by {state.spec.model}"
    if benchmark is None:
        return None, origin + " (unfinished: its benchmark is not recorded yet)"
    return ConversationRef(benchmark, state.spec.conversation_id, data_dir), origin


def _study(folder: Path, data_dir: Path | None) -> Catalog:
    from memdir.study import load_run

    run = load_run(folder)
    run_data = data_dir
    manifest = folder / "manifest.json"
    if run_data is None and manifest.is_file():
        configured = json.loads(manifest.read_text("utf-8")).get("config", {}).get("data_dir")
        run_data = Path(configured) if configured else None
    stores: dict[str, BrowsedStore] = {}
    missing: dict[str, str] = {}
    for key, info in run.stores.items():
        if info.path is None:
            if info.variant != "closed-book":  # a closed-book cell reads no store
                missing[key] = info.error or "the run recorded no folder for it"
            continue
        if not Path(info.path).is_dir():
            missing[key] = f"its folder {info.path} is not there (moved or deleted?)"
            continue
        build = info.build
        ref = None
        if build is not None and build.benchmark and build.conversation_id:
            ref = ConversationRef(build.benchmark, build.conversation_id, run_data)
        stores[slug(key)] = BrowsedStore(slug(key), key, Store(Path(info.path)), ref,
                                         f"{info.variant} store of this run")
    report = folder / "report" / "report.md"
    return Catalog("study", folder, f"study run “{folder.name}”", stores, study=run,
                   data_dir=run_data, missing=missing,
                   report=report if report.is_file() else None)


def _skills(folder: Path) -> Catalog:
    from memdir.skills import load_run as load_skills_run

    cells = load_skills_run(folder)
    stores: dict[str, BrowsedStore] = {}
    for report in cells:
        for chain in report.chains:
            root = folder / report.cell.key / chain / "store"
            if root.is_dir():
                sid = chain_store_id(report.cell.key, chain)
                stores[sid] = BrowsedStore(sid, f"{report.cell.key} / {chain}", Store(root),
                                           None, f"the library of chain {chain}")
    return Catalog("skills", folder, f"skills run “{folder.name}”", stores, skills=cells)


def chain_store_id(cell_id: str, chain: str) -> str:
    """The store id of a skills chain's library."""
    return slug(f"{cell_id}--{chain}")


def open_target(
    path: Path,
    *,
    conversation: ConversationRef | Conversation | None = None,
    data_dir: Path | None = None,
) -> Catalog:
    """Decide what ``path`` is and open it for browsing.

    Args:
        path: A store, a build folder, a study run folder or a skills run folder.
        conversation: The conversation a plain store was built from (overrides what a
            build folder records).
        data_dir: The benchmark data folder (default: what the run recorded, or none).

    Raises:
        BrowseError: ``path`` is not a folder, or not one of the kinds above.
    """
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise BrowseError(f"{path} is not a folder; give a store, a build folder or a "
                          "run folder")
    if any((folder / "cells").glob("*/status.json")):
        return _study(folder, data_dir)
    if any(folder.glob("*/cell.json")):
        return _skills(folder)
    root = folder / "memories" if (folder / "build.json").is_file() else folder
    if not root.is_dir():
        raise BrowseError(f"{folder} has a build.json but no memories/ folder")
    ref, origin = _build_ref(root, data_dir)
    given = conversation if isinstance(conversation, Conversation) else None
    if isinstance(conversation, ConversationRef):
        ref = conversation
    entry = BrowsedStore(STORE_ID, str(root), Store(root), ref, origin or "a store folder", given)
    return Catalog("store", folder, f"store {root}", {entry.id: entry}, data_dir=data_dir)

