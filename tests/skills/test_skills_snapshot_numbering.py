"""A chain's snapshots count tasks from 1, as its page does, and resume finds either count.

The chain page numbers a chain's tasks from 1 and says the library after task k is step k
of its history; the snapshot messages said ``task 000`` for the first task, so step 2's
message named task 001 beside row 2. They count from 1 now. A rerun that integrates a
cut-short attempt again restores the snapshot taken after the task before it: it is found
by the commit the step record names, or by the task id in the message, so a chain written
while messages counted from 0 resumes to the same store as one written since.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.skills._run import StepRecord, _restore, _snapshot_message
from memdir.store import Store
from memdir.store.history import History

TASKS = ("look_at_obj-Book/trial_1", "pick_and_place-Cup/trial_2", "clean-Mug/trial_3")


def _chain(root: Path, first: int) -> tuple[Store, History, dict[int, StepRecord]]:
    """A chain's store after three tasks, its messages numbered from ``first``."""
    store = Store(root, create=True)
    history = History(store)
    history.init()
    history.snapshot("start: empty store")
    records = {}
    for position, task_id in enumerate(TASKS):
        store.create(f"/memories/episodes/{position:03d}.md",
                     f"---\nname: {position:03d}\ndescription: task {task_id}\n---\nok\n")
        commit = history.snapshot(f"task {position + first:03d} {task_id}")
        records[position] = StepRecord(position=position, task_id=task_id, family="f",
                                       success=True, steps_used=3, snapshot=commit)
    return store, history, records


def test_snapshot_messages_count_tasks_from_one() -> None:
    assert _snapshot_message(0, TASKS[0]) == f"task 001 {TASKS[0]}"
    assert _snapshot_message(139, TASKS[2]) == f"task 140 {TASKS[2]}"


@pytest.mark.parametrize("first", [0, 1], ids=["written-counting-from-0", "counting-from-1"])
@pytest.mark.parametrize("by", ["commit", "message"])
def test_resume_restores_the_store_after_the_task_before(tmp_path: Path, first: int,
                                                         by: str) -> None:
    store, history, records = _chain(tmp_path / "store", first)
    if by == "message":  # a record that names no commit: the message is all there is
        records = {p: r.model_copy(update={"snapshot": None}) for p, r in records.items()}
    for position, expected in ((1, 1), (2, 2)):
        _restore(history, records[position - 1])
        assert store.files() == [f"/memories/episodes/{p:03d}.md" for p in range(expected)], (
            position, first, by)
    _restore(history, None)
    assert store.files() == []
    assert len(history.steps()) == 4  # restoring changes the live files, not the history


def test_a_missing_snapshot_is_a_clear_error(tmp_path: Path) -> None:
    _, history, records = _chain(tmp_path / "store", 1)
    lost = records[1].model_copy(update={"snapshot": None, "task_id": "gone/trial_9"})
    with pytest.raises(RuntimeError, match=r"no snapshot the one after task gone/trial_9 "
                                           r"\(position 1\).*start it again"):
        _restore(history, lost)
