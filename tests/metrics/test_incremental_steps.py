"""States measured one after another by one Measurer equal fresh measurements of each state.

The measurer builds each state's tree from the last one and keeps Panel A's sums
with it; these tests drive it (and ``measure_history`` over a real git history)
through random edits, additions, deletions and moves, and compare every state
with a whole measurement of it: the tree built from nothing and both panels
computed on it. Against the same term caches that is equal to the bit. Against
a new ``Measurer`` the tree and Panel A are equal and Panel B agrees to rounding:
a term cache numbers words in the order it first met them, and the order of the
columns changes the order floats are added in.
"""

from __future__ import annotations

import math
from dataclasses import astuple
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_helpers import fm

from memdir.metrics import (
    Measurer,
    StepMetrics,
    StoreMetrics,
    StoreTree,
    TrajectoryRow,
    build_tree,
    measure_history,
    measure_shape,
    measure_taxonomy,
    summarize,
)
from memdir.metrics._measure import _digest
from memdir.store import Store
from memdir.store.history import History

PATHS = (
    "/memories/a.md",
    "/memories/b-c.md",
    "/memories/x/one.md",
    "/memories/x/two.md",
    "/memories/x/y/deep.md",
    "/memories/x-y/side.md",
    "/memories/z/only.md",
)
WORDS = ("nurse", "porto", "garden", "tennis", "harbour", "violin", "budget", "meeting",
         "recipe", "lisbon")

sentences = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)
refs = st.sampled_from(PATHS).flatmap(
    lambda target: st.sampled_from(["", " > # Work", " > # Home", " > ## Porto"]).map(
        lambda section: f"see {target}{section}\n"))


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A memory file: a description, some headings (levels may skip), words and references."""
    name = draw(st.sampled_from(["notes", "alice", "trip"]))
    out = fm(name, draw(st.sampled_from(["Notes", "Alice at work", "", "A trip to Porto"])))
    out += draw(sentences) + "\n"
    for _ in range(draw(st.integers(0, 4))):
        level = draw(st.integers(1, 3))
        title = draw(st.sampled_from(["Work", "Home", "Porto", "Budget"]))
        out += f"{'#' * level} {title}\n{draw(sentences)}\n"
        if draw(st.booleans()):
            out += draw(refs)
    return out


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, str]]:
    """A few states, each made from the last by one to four edits, additions, deletions
    or moves, and edits that append a line (which keep the headings)."""
    state = {path: draw(texts()) for path in draw(st.sets(st.sampled_from(PATHS), max_size=5))}
    states = [dict(state)]
    for _ in range(draw(st.integers(1, 6))):
        for _ in range(draw(st.integers(1, 4))):
            action = draw(st.sampled_from(["edit", "append", "add", "delete", "move"]))
            present = sorted(state)
            absent = [p for p in PATHS if p not in state]
            if action == "add" and absent:
                state[draw(st.sampled_from(absent))] = draw(texts())
            elif present and action == "edit":
                state[draw(st.sampled_from(present))] = draw(texts())
            elif present and action == "append":
                path = draw(st.sampled_from(present))
                state[path] += draw(sentences) + "\n"
            elif present and action == "delete":
                del state[draw(st.sampled_from(present))]
            elif present and absent and action == "move":
                state[draw(st.sampled_from(absent))] = state.pop(draw(st.sampled_from(present)))
        states.append(dict(state))
    return states


def _nodes(tree: StoreTree) -> list[tuple[object, ...]]:
    return [(n.id, n.kind, n.name, n.label, n.path, n.parent, n.depth, n.level, n.description,
             list(n.children)) for n in tree.nodes]


def _close(got: object, want: object) -> bool:
    """Equal, floats to within rounding (at any depth of dicts and lists)."""
    if isinstance(got, float) and isinstance(want, float):
        return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(_close(got[k], want[k]) for k in got)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(_close(a, b) for a, b in zip(got, want, strict=True))
    return got == want


def _assert_same_tree(got: StoreTree, fresh: StoreTree) -> None:
    assert _nodes(got) == _nodes(fresh)
    assert [astuple(u) for u in got.units] == [astuple(u) for u in fresh.units]
    assert list(got.files) == list(fresh.files)


def _assert_whole(measurer: Measurer, state: dict[str, str], got: StoreMetrics | StepMetrics,
                  *, bits: bool = True) -> None:
    """``got`` equals the state measured whole with the measurer's term caches, to the bit,
    and a new measurer's answer, the taxonomy to rounding (and its tree, if it kept one).

    ``bits`` False: the caches are no longer those ``got`` was measured with (they met
    more words since: a wider matrix sums its columns in other blocks; and
    ``measure_history`` lends the measurer another label cache), so Panel B is
    compared to rounding.
    """
    summaries = {p: measurer.summary(_digest(t), t) for p, t in state.items()}
    tree = build_tree(summaries, measurer.heading_depth)
    if isinstance(got, StoreMetrics):
        _assert_same_tree(got.tree, tree)
    assert got.shape.to_dict() == measure_shape(tree).to_dict()
    whole = measure_taxonomy(tree, units_cache=measurer.units_cache,
                             labels_cache=measurer.labels_cache)
    if bits:
        assert got.taxonomy.to_dict() == whole.to_dict()
    else:
        assert _close(got.taxonomy.to_dict(), whole.to_dict())
    fresh = Measurer(heading_depth=measurer.heading_depth).measure(state)
    if isinstance(got, StoreMetrics):
        _assert_same_tree(got.tree, fresh.tree)
    assert got.shape.to_dict() == fresh.shape.to_dict()
    assert _close(got.taxonomy.to_dict(), fresh.taxonomy.to_dict())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states=histories(), depth=st.sampled_from(["nesting", "level"]))
def test_states_measured_in_turn_equal_fresh_measurements(states: list[dict[str, str]],
                                                          depth: str) -> None:
    measurer = Measurer(heading_depth=depth)  # type: ignore[arg-type]
    for state in states:
        _assert_whole(measurer, state, measurer.measure(state))


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(states=histories())
def test_history_table_rows_equal_fresh_measurements(states: list[dict[str, str]],
                                                     tmp_path_factory: object) -> None:
    root = tmp_path_factory.mktemp("store")  # type: ignore[attr-defined]
    store = Store(root)
    history = History(store)
    history.init()
    for k, state in enumerate(states):
        for path in store.files():
            if path not in state:
                store.delete(path)
        for path, text in state.items():
            store.write(path, text)
        history.snapshot(f"state {k}")
    calls: list[tuple[int, int]] = []
    measurer = Measurer()
    trajectory = measure_history(history, measurer=measurer,
                                 progress=lambda done, total: calls.append((done, total)))
    assert len(trajectory.rows) == len(history.steps())
    for row in trajectory.rows:
        state = history.read_state(row.step.index)
        _assert_whole(measurer, state, row.metrics, bits=False)
        whole = Measurer().measure(state)
        fresh = TrajectoryRow(row.step, StepMetrics(whole.shape, whole.taxonomy)).flat()
        assert _close(row.flat(), fresh)
    assert calls == [(k, len(trajectory.rows)) for k in range(1, len(trajectory.rows) + 1)]


def test_the_table_reports_progress_after_every_step(tmp_path: Path) -> None:
    store = Store(tmp_path)
    history = History(store)
    history.init()
    for k in range(5):
        store.write(f"/memories/n{k % 2}.md", fm("n", "Notes") + f"# Work\nstep {k} notes\n")
        history.snapshot(f"step {k}")
    seen: list[tuple[int, int, int]] = []  # (done, total, rows measured when called)
    rows: list[object] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total, len(rows)))

    trajectory = measure_history(history, progress=progress)
    rows.extend(trajectory.rows)
    assert [(d, t) for d, t, _ in seen] == [(k, 5) for k in range(1, 6)]
    assert len(trajectory.rows) == 5


def test_a_state_that_changes_one_body_reuses_every_node() -> None:
    files = {
        "/memories/a.md": summarize(fm("a", "A") + "# Work\nnurse\n## Porto\nharbour\n"),
        "/memories/x/b.md": summarize(fm("b", "B") + "tennis and violin\n"),
    }
    measurer = Measurer()
    first = measurer.measure_summaries(files).tree
    edited = dict(files)
    edited["/memories/a.md"] = summarize(
        fm("a", "A") + "# Work\nnurse\n## Porto\nharbour, lisbon\n")
    second = measurer.measure_summaries(edited).tree
    assert all(a is b for a, b in zip(first.nodes, second.nodes, strict=True))
    assert second.units[-1] is first.units[-1]  # b.md's unit: its file did not change
    assert [u.text for u in second.units] == ["harbour, lisbon", "tennis and violin"]
    fresh = build_tree(edited)
    assert [astuple(u) for u in second.units] == [astuple(u) for u in fresh.units]


def test_a_file_added_in_front_shifts_the_blocks_behind_it() -> None:
    files = {"/memories/m.md": summarize("# Work\nnurse\n"),
             "/memories/z.md": summarize("# Home\ngarden\n")}
    measurer = Measurer()
    first = measurer.measure_summaries(files).tree
    grown = {"/memories/a.md": summarize("tennis\n"), **files}
    second = measurer.measure_summaries(grown).tree
    assert _nodes(second) == _nodes(build_tree(grown))
    assert second.nodes[2].path == "/memories/m.md" and first.nodes[1].path == "/memories/m.md"
    assert first.nodes[1].id == 1 and second.nodes[2].id == 2  # the old tree is left as it was


def test_the_history_label_cache_keeps_its_matrix_while_the_labels_stay() -> None:
    from memdir.metrics._trajectory import _LastMatrix

    cache = _LastMatrix()
    labels = ["work notes", "home garden", "porto trip"]
    first = cache.matrix(labels)
    assert cache.matrix(list(labels)) is first and cache.matrix(labels) is first
    moved = cache.matrix(["work notes", "porto trip"])
    assert moved is not first and moved.shape[0] == 2
    assert cache.matrix(labels) is not first
    assert (cache.matrix(labels) != first).nnz == 0
