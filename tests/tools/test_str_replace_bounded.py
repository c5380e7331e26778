"""Issue 19, item 2: str_replace is linear in the file and does its work outside the lock.

A 512 KiB file of ``a\\n`` with ``old_str: "a"`` took 42 s (55 s through the
anthropic profile with an empty old_str) while holding the store's lock. The
occurrence listing is now computed in one pass, the edit is computed before the
lock is taken (and the file's version checked under it), and an edit that is
out of time stops before it writes. Speed itself is shown by
``benchmarks/hardening_store.py``; these tests check the behaviour.
"""

from __future__ import annotations

import anyio
import pytest
from anthropic_pair import Pair

from memdir.store import DEFAULT_MAX_FILE_BYTES, Store
from memdir.store._deadline import CallTimeoutError, deadline
from memdir.tools import ToolError, ToolSet, write_set
from memdir.tools._anthropic_profile import AnthropicMemoryCommands
from memdir.tools._limits import CallLimits
from memdir.tools._memory import MemoryCommands
from memdir.tools.anthropic import MemoryToolAdapter, anthropic_set

HEADER = "---\nname: big\ndescription: Many lines of a\n---\n"
A_LINES = (DEFAULT_MAX_FILE_BYTES - len(HEADER)) // 2
GUARD = 60  # a hang guard, not a speed target: the old code took 42-55 s here


def _big(store: Store) -> str:
    text = HEADER + "a\n" * A_LINES
    (store.root / "big.md").write_text(text)
    return text


async def test_memdir_names_the_first_lines_and_the_count(store: Store) -> None:
    text = _big(store)
    with anyio.fail_after(GUARD):
        result = await write_set(store).call(
            "str_replace", {"path": "/memories/big.md", "old_str": "a", "new_str": "b"})
    assert result.is_error
    # "name" and "Many lines of a" in the header hold an "a" too.
    assert result.content == (
        f"Error: old_str occurs at least {A_LINES + 3:,} times (the first 10 start on lines "
        "2, 3, 3, 5, 6, 7, 8, 9, 10, 11) in /memories/big.md. Include more surrounding "
        "text so it matches exactly once."
    )
    assert (store.root / "big.md").read_text() == text


@pytest.mark.parametrize(("body", "needle", "expected"), [
    ("x\nqq\nzqz\n", "q", "occurs 3 times (starting on lines 6, 6, 7)"),
    ("qqq\n", "qq", "occurs 2 times (starting on lines 5, 5)"),  # overlapping ones count
    ("q\n" * 10, "q", "occurs 10 times (starting on lines 5, 6, 7, 8, 9, 10, 11, 12, 13, "
                      "14)"),
    ("q\n" * 12, "q", "occurs at least 12 times (the first 10 start on lines 5, 6, 7, 8, "
                      "9, 10, 11, 12, 13, 14)"),
])
async def test_repeated_old_str_messages(store: Store, body: str, needle: str,
                                         expected: str) -> None:
    (store.root / "f.md").write_text("---\nname: f\ndescription: d\n---\n" + body)
    with pytest.raises(ToolError) as raised:
        await MemoryCommands(store).str_replace("/memories/f.md", needle, "z")
    assert str(raised.value) == (f"old_str {expected} in /memories/f.md. Include more "
                                 "surrounding text so it matches exactly once.")


async def test_anthropic_profile_lists_like_the_reference_up_to_the_cap(store: Store) -> None:
    text = "a\n" * (DEFAULT_MAX_FILE_BYTES // 2)
    (store.root / "big.txt").write_text(text)
    tools = anthropic_set(store)
    with anyio.fail_after(GUARD):
        result = await tools.call(
            "str_replace", {"path": "/memories/big.txt", "old_str": "", "new_str": "b"})
    assert result.is_error
    head = ("Error: No replacement was performed. Multiple occurrences of old_str `` in "
            "lines: 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, ")
    assert result.content.startswith(head)
    assert len(result.content) < 4200 and "[cut:" in result.content
    assert (store.root / "big.txt").read_text() == text


def test_the_listing_matches_the_reference_exactly_below_the_cap(store: Store) -> None:
    pair = Pair(store.root.parent / "pair")
    body = "ab\nbab\n\naba\n" * 40
    for target in (pair.reference_root, pair.store.root):
        (target / "f.txt").write_text(body)
    for needle in ("a", "ab", "b", "", "\n", "aba"):
        theirs, ours = pair.run(
            {"command": "str_replace", "path": "/memories/f.txt", "old_str": needle,
             "new_str": "x"})
        assert (ours.is_error, ours.text) == (theirs.is_error, theirs.text), needle


class _Intruder:
    """Another writer, as another process would be: its own Store object on the root."""

    def __init__(self, store: Store) -> None:
        self.other = Store(store.root, lock_timeout=0.01)
        self.lock_was_free: list[bool] = []

    def try_lock(self) -> None:
        try:
            with self.other.locked():
                self.lock_was_free.append(True)
        except Exception:  # the store's "busy" error: the edit holds the lock
            self.lock_was_free.append(False)


def test_store_edit_computes_without_the_lock(store: Store) -> None:
    store.write("/memories/n.md", "one\n")
    intruder = _Intruder(store)

    def change(text: str) -> str:
        intruder.try_lock()
        return text + "two\n"

    store.edit("/memories/n.md", change)
    assert intruder.lock_was_free == [True]
    assert (store.root / "n.md").read_text() == "one\ntwo\n"


def test_store_edit_redoes_a_change_raced_by_another_writer(store: Store) -> None:
    store.write("/memories/n.md", "one\n")
    other = Store(store.root)
    seen: list[str] = []

    def change(text: str) -> str:
        seen.append(text)
        if len(seen) == 1:  # another writer lands while this change is computed
            other.write("/memories/n.md", text + "theirs\n")
        return text + "mine\n"

    store.edit("/memories/n.md", change)
    assert seen == ["one\n", "one\ntheirs\n"]
    assert (store.root / "n.md").read_text() == "one\ntheirs\nmine\n"  # no update lost


def test_store_edit_with_a_pinned_version_is_refused_when_raced(store: Store) -> None:
    version = store.write("/memories/n.md", "one\n")
    other = Store(store.root)

    def change(text: str) -> str:
        other.write("/memories/n.md", "theirs\n")
        return "mine\n"

    with pytest.raises(Exception, match="changed since you read it"):
        store.edit("/memories/n.md", change, expect=version)
    assert (store.root / "n.md").read_text() == "theirs\n"


async def test_anthropic_edit_computes_without_the_lock_and_redoes_a_race(store: Store) -> None:
    (store.root / "n.txt").write_text("one\n")
    commands = AnthropicMemoryCommands(store)
    intruder = _Intruder(store)
    other = Store(store.root)
    seen: list[str] = []

    def change(text: str) -> str:
        intruder.try_lock()
        seen.append(text)
        if len(seen) == 1:
            other.write("/memories/n.md", "unrelated\n")  # a write elsewhere: no retry
            (store.root / "n.txt").write_text(text + "theirs\n")
        return text + "mine\n"

    commands._edit("/memories/n.txt", change)
    assert intruder.lock_was_free == [True, True]
    assert seen == ["one\n", "one\ntheirs\n"]
    assert (store.root / "n.txt").read_text() == "one\ntheirs\nmine\n"


@pytest.mark.parametrize("profile", ["memdir", "anthropic"])
async def test_an_edit_out_of_time_writes_nothing(store: Store, profile: str) -> None:
    text = HEADER + "keep\n"
    (store.root / "big.md").write_text(text)
    commands = MemoryCommands(store) if profile == "memdir" else AnthropicMemoryCommands(store)
    with deadline(0, interruptible=False), pytest.raises(CallTimeoutError):
        await commands.str_replace("/memories/big.md", "keep", "gone")
    with deadline(0, interruptible=False), pytest.raises(CallTimeoutError):
        await commands.insert("/memories/big.md", 5, "added")
    assert (store.root / "big.md").read_text() == text


async def test_through_the_dispatcher_the_model_is_told_it_was_stopped(store: Store) -> None:
    text = HEADER + "keep\n"
    (store.root / "big.md").write_text(text)
    tools = ToolSet("write", write_set(store).tools.values(), limits=CallLimits(1e-9, 1000))
    result = await tools.call(
        "str_replace", {"path": "/memories/big.md", "old_str": "keep", "new_str": "gone"})
    assert result.is_error and "time limit" in result.content
    assert (store.root / "big.md").read_text() == text


async def test_the_adapter_says_nothing_was_changed(store: Store) -> None:
    (store.root / "notes.txt").write_text("keep\n")
    adapter = MemoryToolAdapter(store, limits=CallLimits(1e-9, 1000))
    result = await adapter.handle({"type": "tool_use", "id": "t", "name": "memory", "input": {
        "command": "str_replace", "path": "/memories/notes.txt", "old_str": "keep",
        "new_str": "gone"}})
    assert result["is_error"]
    assert result["content"].endswith("was stopped. Nothing was changed; try again, or edit "
                                      "a smaller file.")
    assert (store.root / "notes.txt").read_text() == "keep\n"
