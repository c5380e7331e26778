"""Fixtures shared by every test package."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import offline_smoke
from memdir.store import Store
from offline_smoke import OfflineSmokeRun

SHARED_DATA = (Path(__file__).resolve().parents[1].parent / "shared" / "data").resolve()
"""Resolved, as memdir resolves the data folders it is given (../shared may be a link)."""


SHARED_BUILDS = {
    "tests/browse/test_health_paging.py": {"alarmed_site"},
    "tests/browse/test_pages_walk.py": {"moved_run", "run_site"},
    "tests/metrics/test_linear.py": {"generated"},
    "tests/skills/test_skills_episodes.py": {"env", "chain"},
    "tests/skills/test_skills_paper_views.py": {"run"},
    "tests/skills/test_skills_run.py": {"ran"},
    "tests/study/test_built_variants.py": {"built_run"},
    "tests/study/test_harness_study.py": {"harness_run"},
    "tests/study/test_rejudge.py": {"judged_run"},
    "tests/study/test_report_tables.py": {"run_dir", "smoke_dir"},
    "tests/study/test_run.py": {"smoke_run"},
    "tests/tools/test_listing_cap.py": {"big"},
}
"""Module-scoped fixtures that build a study run, a skills chain or a large store.

Each took seconds to tens of seconds to set up (``pytest --setup-only
--durations``); under pytest-xdist, every worker that ran one of the tests
using it built it again. The tests that use one run on one worker.
"""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order and group the tests for pytest-xdist (``--dist loadgroup``, scripts/test.sh).

    Tests marked slow run first, each part keeping its order: xdist hands tests
    out in this order as workers free up, and a test of a minute that came last
    would keep one worker busy while the others idle. The tests of a module that
    use one of its :data:`SHARED_BUILDS` share an xdist group.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        builds = SHARED_BUILDS.get(module, set())
        if builds & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group(module))


class _GroupedIds:
    """Make pytest-xdist's ``--dist loadgroup`` group again under pytest 9.2.

    In a worker, xdist names a grouped test ``NODEID@GROUP`` by writing the
    node's old ``_nodeid`` attribute, and the controller groups the tests by that
    suffix of the ids the worker reports. pytest 9.2 reads a test's id from its
    structured ``_id`` instead, so the suffix never reached the controller: every
    group was split across the workers, and each worker built the group's shared
    fixture again (pytest-xdist issue 1386, open). After xdist's hook, this one
    gives the structured id the suffixed name, as xdist meant. It changes nothing
    where xdist renamed no test (no xdist, another ``--dist``, no group), nor under
    a pytest that still reads ``_nodeid``.
    """

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        from _pytest.nodeid import NodeId

        for item in items:
            named = getattr(item, "_nodeid", None)
            if isinstance(named, str) and named != item.nodeid \
                    and isinstance(getattr(item, "_id", None), NodeId):
                item._id = NodeId.parse(named)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_GroupedIds(), "memdir-grouped-ids")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """An empty store in a fresh temporary folder."""
    return Store(tmp_path / "memories", create=True)


@pytest.fixture
def shared_data() -> Path:
    """The read-only benchmark files in ../shared/data; skips the test where absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    return SHARED_DATA


@pytest.fixture(scope="session")
def offline_smoke_run(tmp_path_factory: pytest.TempPathFactory) -> OfflineSmokeRun:
    """docs/study.md's offline smoke run, made once per session (tests/offline_smoke.py).

    Read it, never write into it: a test that writes (a report) works on a copy.
    """
    if not offline_smoke.DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    return offline_smoke.make(tmp_path_factory.mktemp("offline-smoke-run"))


@pytest.fixture
def no_data_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ``MEMDIR_DATA_DIR``, and settings re-read, so a test names its data folder itself."""
    from memdir.config import get_settings

    monkeypatch.delenv("MEMDIR_DATA_DIR", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def make_deep_tree(root: Path, levels: int, name: str, text: str, folder: str = "d") -> str:
    """Folders ``levels`` deep below ``root`` with one file at the bottom, made by hand.

    Made as a shell command would make them (the store's own writes refuse such
    depths); folders that exist already are entered, so a second call adds a file
    to the same tree. Returns the file's agent path. Remove the tree with
    :meth:`Store.delete` (``/memories/<folder>``): pytest's clean-up of old temp
    folders recurses and fails on it.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, dir_fd=fd)
            child = os.open(folder, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd)
        with os.fdopen(out, "w", encoding="utf-8") as handle:
            handle.write(text)
    finally:
        os.close(fd)
    return "/memories/" + f"{folder}/" * levels + name


def remove_tree(top: Path) -> None:
    """Remove ``top`` and all below it through folder handles, without recursion.

    shutil.rmtree recurses per level, and a walk by host paths fails once a path is
    longer than the system allows (a 600-level tree of 8-letter folders is).
    """
    from memdir.store._paths import remove_at

    parent = os.open(top.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with contextlib.suppress(FileNotFoundError):
            remove_at(parent, top.name)
    finally:
        os.close(parent)


class DeepTrees:
    """Makes trees with :func:`make_deep_tree` and removes them when the test ends.

    pytest's own clean-up of old temp folders would fail on them. A test that
    copies such a tree elsewhere removes the copy itself (:meth:`Store.delete`).
    """

    def __init__(self) -> None:
        self.made: list[Path] = []

    def __call__(self, root: Path, levels: int, name: str, text: str, folder: str = "d") -> str:
        self.made.append(Path(root) / folder)
        return make_deep_tree(root, levels, name, text, folder)


@pytest.fixture
def deep_tree() -> Iterator[DeepTrees]:
    """A :class:`DeepTrees`, for tests that need a tree deeper than the store makes."""
    trees = DeepTrees()
    yield trees
    for top in trees.made:
        remove_tree(top)
