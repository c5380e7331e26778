"""The change feed names every change under a store, made by anyone, before the next poll."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store._feed import ChangeFeed, Changes, in_one_call, one_call


@pytest.fixture
def feed(store: Store) -> ChangeFeed:
    (store.root / "people").mkdir()
    (store.root / "people" / "maya.md").write_text("---\nname: maya\n---\nnurse\n")
    made = ChangeFeed(store.root)
    if not made.live:
        pytest.skip("inotify is not available here")
    assert made.poll().everything  # a new reader has seen nothing yet
    return made


def _paths(changes: Changes) -> set[str]:
    assert not changes.everything
    return {"/".join(p) for p in changes.paths}


def test_nothing_changed_is_nothing(feed: ChangeFeed) -> None:
    assert feed.poll().none


def test_an_edit_in_place_with_times_put_back_is_named(store: Store, feed: ChangeFeed) -> None:
    host = store.root / "people" / "maya.md"
    before = host.stat()
    with open(host, "r+b") as handle:
        handle.write(b"---\nname: maya\n---\nmedic\n")
    os.utime(host, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _paths(feed.poll()) == {"people/maya.md"}
    assert feed.poll().none


def test_a_folder_whose_mode_changes_is_still_watched(store: Store, feed: ChangeFeed) -> None:
    # The store makes new folders 0700 after making them: the feed lost the folder's
    # watch on that change of its own attributes, and missed every later write inside.
    store.create("/memories/work/a.md", "---\nname: a\ndescription: a\n---\n")
    assert _paths(feed.poll()) == {"work"}
    (store.root / "work").chmod(0o755)
    assert _paths(feed.poll()) == {"work"}
    store.create("/memories/work/b.md", "---\nname: b\ndescription: b\n---\n")
    (store.root / "people").chmod(0o700)
    (store.root / "people" / "maya.md").write_text("---\nname: maya\n---\nmedic\n")
    assert _paths(feed.poll()) == {"work/b.md", "people", "people/maya.md"}


def test_writes_by_another_process_are_named(store: Store, feed: ChangeFeed) -> None:
    subprocess.run(["sh", "-c", "echo hi >> people/maya.md; echo x > new.md"],
                   cwd=store.root, check=True)
    assert _paths(feed.poll()) == {"people/maya.md", "new.md"}


def test_memdir_writes_deletes_and_renames_are_named(store: Store, feed: ChangeFeed) -> None:
    store.create("/memories/a.md", "---\nname: a\ndescription: a\n---\n")
    assert _paths(feed.poll()) == {"a.md"}  # the atomic write's temporary file is hidden
    store.rename("/memories/a.md", "/memories/people/b.md")
    assert _paths(feed.poll()) == {"a.md", "people/b.md"}
    store.delete("/memories/people/b.md")
    assert _paths(feed.poll()) == {"people/b.md"}


def test_a_new_folder_and_what_was_written_into_it_at_once(store: Store, feed: ChangeFeed) -> None:
    # The folder and its files appear before the feed can watch it: the folder is
    # named (its reader walks it), and later changes inside it are named too.
    subprocess.run(["sh", "-c", "mkdir -p x/y && echo 1 > x/y/z.md"], cwd=store.root,
                   check=True)
    assert _paths(feed.poll()) == {"x"}
    (store.root / "x" / "y" / "z.md").write_text("2\n")
    assert _paths(feed.poll()) == {"x/y/z.md"}


def test_moved_folders_are_followed(store: Store, feed: ChangeFeed) -> None:
    shutil.move(store.root / "people", store.root / "staff")
    assert _paths(feed.poll()) == {"people", "staff"}
    (store.root / "staff" / "maya.md").write_text("moved\n")
    assert _paths(feed.poll()) == {"staff/maya.md"}
    (store.root / "staff").rename(store.root / ".hidden")
    assert _paths(feed.poll()) == {"staff"}
    (store.root / ".hidden" / "maya.md").write_text("unseen\n")
    assert feed.poll().none  # hidden folders are not followed
    (store.root / ".hidden").rename(store.root / "back")
    assert _paths(feed.poll()) == {"back"}


def test_hidden_state_is_not_reported(store: Store, feed: ChangeFeed) -> None:
    (store.root / ".memdir" / "anything").write_text("x")
    (store.root / ".notes.md").write_text("x")
    assert feed.poll().none


def test_a_lost_event_queue_means_everything(store: Store, feed: ChangeFeed) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip("the event queue is too long to overflow quickly here")
    for i in range(limit + 10):
        (store.root / "people" / "maya.md").write_text(str(i))
    assert feed.poll().everything
    (store.root / "people" / "maya.md").write_text("after")
    assert _paths(feed.poll()) == {"people/maya.md"}


def test_a_closed_feed_says_everything(store: Store, feed: ChangeFeed) -> None:
    feed.close()
    assert not feed.live
    assert feed.poll().everything and feed.poll().everything


def test_a_deep_tree_is_watched_through_handles(
    store: Store, deep_tree: Callable[..., str]
) -> None:
    # Deeper than PATH_MAX allows as one path: watches are added through folder handles.
    deep_tree(store.root, 600, "first.md", "x", folder="dddddddd")
    feed = ChangeFeed(store.root)
    if not feed.live:
        pytest.skip("inotify is not available here")
    feed.poll()
    deep_tree(store.root, 600, "x.md", "y", folder="dddddddd")
    changes = feed.poll()
    assert [len(p) for p in changes.paths] == [601]


@pytest.fixture
def lazy_feed(store: Store) -> Iterator[ChangeFeed]:
    (store.root / "people").mkdir()
    feed = ChangeFeed(store.root, lazy=True)
    if not feed.live:
        pytest.skip("inotify is not available here")
    try:
        yield feed
    finally:
        feed.close()


def test_a_lazy_feed_watches_nothing_inside_one_call(store: Store, lazy_feed: ChangeFeed
                                                     ) -> None:
    # One `memdir tool` call polls inside one_call: it should not pay for a watch per folder.
    feed = lazy_feed
    with one_call():
        assert feed.poll().everything
        (store.root / "people" / "early.md").write_text("x\n")
        assert feed.poll().everything
        assert feed._notify is None  # nothing watched, however often it polls
    (store.root / "people" / "later.md").write_text("y\n")
    assert feed.poll().everything  # the first poll outside: it watches from here
    (store.root / "people" / "late.md").write_text("z\n")
    assert _paths(feed.poll()) == {"people/late.md"}
    assert feed.poll().none
    feed.close()
    assert not feed.live and feed.poll().everything


def test_a_lazy_feed_polled_outside_one_call_watches_from_its_first_poll(
        store: Store, lazy_feed: ChangeFeed) -> None:
    # A server's reader: its second poll must not walk the store again.
    feed = lazy_feed
    assert feed._notify is None  # made without a watch
    assert feed.poll().everything
    assert feed._notify is not None
    assert feed.poll().none
    (store.root / "people" / "new.md").write_text("x\n")
    assert _paths(feed.poll()) == {"people/new.md"}


def test_one_call_reaches_a_copied_context_and_ends_with_its_block() -> None:
    import contextvars
    import threading

    seen: list[bool] = []
    with one_call():
        context = contextvars.copy_context()
        worker = threading.Thread(target=lambda: seen.append(context.run(in_one_call)))
        worker.start()
        worker.join()
        assert in_one_call()
    assert seen == [True]
    assert not in_one_call()
