"""Metrics over histories: a verbatim LoCoMo build and a scripted reorganisation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from metrics_helpers import fm

from memdir.metrics import (
    COLUMNS,
    Measurer,
    draw_tree_png,
    draw_tree_text,
    extract_locators,
    health_report,
    measure_history,
    measure_state,
    plot_trajectory,
)
from memdir.store import Store
from memdir.store.history import History
from memdir.tables import MISSING

PNG = b"\x89PNG\r\n\x1a\n"


def _is_png(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 1000 and path.read_bytes()[:8] == PNG


def test_verbatim_locomo_trajectory(locomo_conv48: History, tmp_path: Path) -> None:
    trajectory = measure_history(locomo_conv48)
    table = trajectory.table()
    assert len(table) == 30
    assert [row["files"] for row in table] == list(range(1, 31))
    assert all(row["folders"] == 0 and row["sections"] == 0 for row in table)
    sizes = [row["bytes"] for row in table]
    assert all(a < b for a, b in zip(sizes, sizes[1:], strict=False))
    live = locomo_conv48.store
    assert sizes[-1] == sum(len(live.read(p).encode()) for p in live.files())
    assert table[0]["b1"] is None and table[1]["b1"] is not None
    pngs = plot_trajectory(trajectory, tmp_path / "plots", prefix="conv-48-")
    assert [p.name for p in pngs] == ["conv-48-growth.png", "conv-48-adherence.png"]
    assert all(_is_png(p) for p in pngs)
    assert trajectory.to_csv().splitlines()[0] == ",".join(COLUMNS)
    first = trajectory.to_markdown().splitlines()[2].split(" | ")
    assert first[COLUMNS.index("b1")] == MISSING  # the one spelling every report uses
    assert trajectory.to_csv().splitlines()[1].split(",")[COLUMNS.index("b1")] == ""


def test_verbatim_store_keeps_every_source_locator(locomo_conv48: History,
                                                   shared_data: Path, tmp_path: Path) -> None:
    data = json.loads((shared_data / "locomo" / "locomo10.json").read_text())
    conv = next(c for c in data if c["sample_id"] == "conv-48")["conversation"]
    source = {
        f"S{turn['dia_id'].split(':')[0][1:]}T{int(turn['dia_id'].split(':')[1])}"
        for key, turns in conv.items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    }
    report = health_report(locomo_conv48.store, reference=source)
    assert report.lost is not None and report.lost.reference == len(source) > 500
    assert report.lost.missing == []
    # a lossy rewrite: rebuild the last state elsewhere and drop session 7
    copy = locomo_conv48.checkout_to(-1, tmp_path / "rewrite")
    session7 = extract_locators(copy.read("/memories/session-07.md"))
    copy.delete("/memories/session-07.md")
    lossy = health_report(copy, reference=source)
    assert lossy.lost is not None and set(lossy.lost.missing) == session7
    assert not lossy.healthy
    assert any("source locators" in alarm for alarm in lossy.alarms)


def _scripted(store: Store) -> History:
    history = History(store)
    history.init()
    alice = fm("alice", "Alice, work and home") + "# Work\nAlice works as a night nurse at the " \
        "Lisbon city hospital.\n# Home\nAlice rents a flat by the river with her sister.\n"
    bob = fm("bob", "Bob, carpentry") + "Bob builds oak tables and walnut chairs in his " \
        "workshop behind the market.\n"
    trips = fm("trips", "Trips") + "## Porto\nThe May trip to Porto took three days by train " \
        "and ended with a river cruise.\n"
    store.create("/memories/notes/alice.md", alice)
    store.create("/memories/notes/bob.md", bob)
    store.create("/memories/trips.md", trips)
    history.snapshot("task 1: first notes")
    store.rename("/memories/notes/alice.md", "/memories/people/alice.md")
    history.snapshot("task 2: rename alice into people/")
    merged = alice + "# Friends\nBob builds oak tables and walnut chairs in his workshop.\n"
    store.write("/memories/people/alice.md", merged)
    store.delete("/memories/notes/bob.md")
    history.snapshot("task 3: merge bob into alice")
    store.delete("/memories/trips.md")
    history.snapshot("task 4: delete trips")
    return history


def test_scripted_reorganisation(store: Store, tmp_path: Path) -> None:
    history = _scripted(store)
    measurer = Measurer()
    trajectory = measure_history(history, measurer=measurer)
    table = trajectory.table()
    assert [r["files"] for r in table] == [3, 3, 2, 1]
    assert [r["folders"] for r in table] == [1, 2, 1, 1]
    # Work, Home, Porto; the same after the rename; + Friends; - Porto
    assert [r["sections"] for r in table] == [3, 3, 4, 3]
    # step 0 leaves: Work, Home (depth 3), bob.md (2), Porto (2) -> mean 10/4
    assert table[0]["mean_depth"] == pytest.approx(10 / 4)
    assert [r["message"] for r in table][2] == "task 3: merge bob into alice"
    # every step measured from cached blobs equals a fresh measurement of its state
    for step, row in enumerate(trajectory.rows):
        fresh = measure_state(history.read_state(step))
        assert row.metrics.shape.to_dict() == fresh.shape.to_dict()
        for key, value in fresh.taxonomy.to_dict().items():
            assert row.metrics.taxonomy.to_dict()[key] == pytest.approx(value)
    assert history.verify().ok


def test_tree_pictures(store: Store, tmp_path: Path) -> None:
    history = _scripted(store)
    tree = measure_state(history.read_state(0)).tree
    text = draw_tree_text(tree)
    assert text.splitlines() == [
        "/memories",
        "├── notes/",
        "│   ├── alice.md  (Alice, work and home)",
        "│   │   ├── # Work",
        "│   │   └── # Home",
        "│   └── bob.md  (Bob, carpentry)",
        "└── trips.md  (Trips)",
        "    └── ## Porto",
    ]
    assert draw_tree_text(tree, descriptions=False, max_depth=1).splitlines() == [
        "/memories", "├── notes/", "└── trips.md"]
    assert _is_png(draw_tree_png(tree, tmp_path / "tree.png"))
