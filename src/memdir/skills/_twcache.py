"""Caches for the two slow parts of TextWorld's PDDL games: grounding and text parsing.

TextWorld grounds a game's PDDL problem with Fast Downward's translator twice
per state it builds (a plain and an optimised translation), and it builds one
state when a game is loaded and another on every reset. Translating takes
0.4-4 s per call, so a load followed by a reset pays four translations of the
same input. This module puts a memoising stand-in for the ``fast_downward``
module into TextWorld's PDDL logic module, so that

- in memory, the last few translations are reused (load + reset translate once);
- on disk, when a folder is given, translations persist across runs as
  compressed pickles keyed by the SHA-256 of (translator version, options,
  domain, problem), so a second chain over the same games resets in a
  fraction of the time.

The pickles are a cache this process wrote itself: delete the folder to rebuild it.

Each step, TextWorld also re-parses the same few dozen grammar strings (command
templates, feedback rules) with a TatSu parser, about 25 ms apiece.
:func:`install_parse_cache` memoises that parse; callers get a deep copy of the
parsed symbols, since TextWorld writes contexts into them.
"""

from __future__ import annotations

import gzip
import hashlib
import pickle
import sys
from collections import OrderedDict
from collections.abc import Callable
from copy import deepcopy
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["TranslationCache", "install_parse_cache", "install_translation_cache"]

_MEMORY_SLOTS = 4


def _translator_version() -> str:
    try:
        return version("fast-downward-textworld")
    except PackageNotFoundError:
        return "unknown"


_TRANSLATOR = _translator_version()  # part of every key: an upgrade starts a fresh cache


class TranslationCache:
    """Stands in for the ``fast_downward`` module; only ``pddl2sas`` is memoised."""

    def __init__(self, real: Any, folder: Path | None = None) -> None:
        self._real = real
        self.folder = folder
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self.hits = 0
        self.disk_hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def pddl2sas(self, domain: str, problem: str, verbose: bool = False,
                 optimize: bool = False) -> Any:
        """Fast Downward's translation of a domain and problem, from cache where possible."""
        key = hashlib.sha256(
            f"{_TRANSLATOR}\0{optimize}\0{domain}\0{problem}".encode()).hexdigest()
        if key in self._memory:
            self.hits += 1
            self._memory.move_to_end(key)
            return self._memory[key]
        result = self._from_disk(key)
        if result is None:
            self.misses += 1
            argv = list(sys.argv)  # the translator overwrites sys.argv for its option parser
            try:
                result = self._real.pddl2sas(domain, problem, verbose=verbose, optimize=optimize)
            finally:
                sys.argv = argv
            self._to_disk(key, result)
        else:
            self.disk_hits += 1
        self._memory[key] = result
        while len(self._memory) > _MEMORY_SLOTS:
            self._memory.popitem(last=False)
        return result

    def _path(self, key: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{key}.pkl.gz"

    def _from_disk(self, key: str) -> Any:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        return pickle.loads(gzip.decompress(path.read_bytes()))  # our own cache files

    def _to_disk(self, key: str, result: Any) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(gzip.compress(pickle.dumps(result), compresslevel=3))
        tmp.replace(path)


def install_translation_cache(folder: Path | None = None) -> TranslationCache:
    """Route TextWorld's PDDL translations through one process-wide cache.

    Args:
        folder: where translations persist across runs; None keeps them in memory only.
            A later call with a folder switches the cache to that folder.

    Returns:
        The cache in place (its ``hits``, ``disk_hits`` and ``misses`` count calls).
    """
    logic: Any = import_module("textworld.envs.pddl.logic")

    current = logic.fast_downward
    if not isinstance(current, TranslationCache):
        current = TranslationCache(current)
        logic.fast_downward = current
    if folder is not None:
        current.folder = folder
    return current


def install_parse_cache() -> None:
    """Memoise TextWorld's parse of grammar strings for the whole process (idempotent)."""
    textgen: Any = import_module("textworld.envs.pddl.textgen")

    original: Callable[..., Any] = textgen._parse_and_convert
    if getattr(original, "memdir_cached", False):
        return
    parsed: dict[tuple[Any, ...], Any] = {}

    def cached(text: str, rule_name: str = "symbols", **kwargs: Any) -> Any:
        key = (text, rule_name, tuple(sorted(kwargs.items())))
        if key not in parsed:
            parsed[key] = original(text, rule_name=rule_name, **kwargs)
        return deepcopy(parsed[key])

    cached.memdir_cached = True  # type: ignore[attr-defined]
    textgen._parse_and_convert = cached
    _cache_condition_parse()


def _cache_condition_parse() -> None:
    """Memoise the parse of the logical conditions the grammar queries each step.

    Only ``conjunctiveQuery`` parses are kept: they yield a list of immutable
    predicates, handed out as a fresh list each time.
    """
    logic: Any = import_module("textworld.logic")

    original: Callable[..., Any] = logic._parse_and_convert
    if getattr(original, "memdir_cached", False):
        return
    parsed: dict[str, list[Any]] = {}

    def cached(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("rule_name") != "conjunctiveQuery" or len(args) != 1 or len(kwargs) != 1:
            return original(*args, **kwargs)
        text = args[0]
        if text not in parsed:
            parsed[text] = list(original(text, rule_name="conjunctiveQuery"))
        return list(parsed[text])

    cached.memdir_cached = True  # type: ignore[attr-defined]
    logic._parse_and_convert = cached
