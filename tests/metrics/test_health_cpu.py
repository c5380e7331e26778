"""Health's CPU work: the collector paused, B1's row keys and the pieces' words in C."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pytest
import typer
from adversarial_text import BODY, LINE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_helpers import fill_people, fm
from numpy.testing import assert_array_equal
from scipy import sparse
from typer.testing import CliRunner

from memdir.cli import health as health_cli
from memdir.metrics import _health, _taxonomy, _text
from memdir.metrics._health import collector_paused, health_report
from memdir.metrics._text import TfidfCache
from memdir.store import Store


@pytest.fixture
def collector_on() -> Iterator[None]:
    """The collector on before the test, and as it was after it (frozen objects let go)."""
    was = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    if not was:
        gc.disable()


def _fill(store: Store) -> None:
    fill_people(store)
    store.create("/memories/notes.md", fm("notes", "Weather on the moon")
                 + "Alice works night shifts as a nurse in Lisbon [S1T2].\n"
                 + "see /memories/people/carol.md\n")


def test_collector_is_off_inside_and_restored_after(collector_on: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner one leaves it off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # it was off: it stays off
    gc.enable()


def test_collector_restored_when_the_measurement_fails(collector_on: None) -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_health_report_measures_with_the_collector_off(
        store: Store, collector_on: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(store)
    seen: list[bool] = []
    measure = _health.measure_store

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return measure(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_health, "measure_store", spy)
    paused = health_report(store)
    monkeypatch.undo()
    assert seen == [False]
    assert gc.isenabled()
    # The same report as with the collector running throughout.
    monkeypatch.setattr(_health, "collector_paused", _running)
    running = health_report(store)
    assert json.dumps(paused.to_dict(), default=str) == json.dumps(running.to_dict(), default=str)
    assert paused.alarms  # the store raises alarms: the comparison covers them


class _running:
    """A stand-in for :func:`collector_paused` that leaves the collector on."""

    def __enter__(self) -> None:
        assert gc.isenabled()

    def __exit__(self, *exc: object) -> None:
        return None


def test_cli_freezes_the_report_and_leaves_the_collector_on(
        store: Store, collector_on: None) -> None:
    _fill(store)
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test harness."""

    health_cli.register(app)
    gc.unfreeze()
    before = gc.get_freeze_count()
    result = CliRunner().invoke(app, ["health", str(store.root), "--json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.output)["alarm_counts"]["dangling reference"] == 1
    assert gc.isenabled()
    assert gc.get_freeze_count() > before  # what the report made is out of later collections


def _row_keys_by_rows(matrix: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """The definition: each row's terms and values as bytes, numbered as first seen."""
    seen: dict[bytes, int] = {}
    out = np.empty(len(rows), np.int64)
    for k, r in enumerate(rows.tolist()):
        lo, hi = matrix.indptr[r], matrix.indptr[r + 1]
        key = matrix.indices[lo:hi].tobytes() + b"|" + matrix.data[lo:hi].tobytes()
        out[k] = seen.setdefault(key, len(seen))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_row_keys_match_the_row_by_row_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, width = 300, 12
    dense = rng.integers(0, 3, size=(n, width)).astype(np.float64) * rng.choice([0.5, 1.0, 2.0])
    dense[rng.random(n) < 0.1] = 0.0  # empty rows
    dense[5] = dense[7]  # identical rows
    matrix = sparse.csr_matrix(dense)
    matrix.data[matrix.data == 1.0] = -0.0 if seed % 2 else 1.0  # bytes, not values, decide
    rows = rng.permutation(n)[: n - 20]
    rows = np.concatenate([rows, rows[:15]])  # rows asked for twice
    assert_array_equal(_taxonomy._row_keys(matrix, rows), _row_keys_by_rows(matrix, rows))
    wide = matrix.astype(np.float64)
    wide.indices = wide.indices.astype(np.int64)  # 8-byte terms
    assert_array_equal(_taxonomy._row_keys(wide, rows), _row_keys_by_rows(wide, rows))


def test_row_keys_tell_equal_values_on_other_terms_apart() -> None:
    # [1, 2] on terms (0, 1) and [1, 2] on terms (1, 2): as many bytes, not the same ones
    matrix = sparse.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 2.0], [1.0, 2.0, 0.0]]))
    assert _taxonomy._row_keys(matrix, np.arange(3)).tolist() == [0, 1, 0]


TEXT = st.one_of(LINE, BODY, st.sampled_from(["", "\x00", "a\x00b", " \x00 ", "x y"]))


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(TEXT, max_size=8))
def test_joined_words_are_each_texts_words_with_a_separator_between(texts: list[str]) -> None:
    expected: list[str] = []
    for k, text in enumerate(texts):
        if k:
            expected.append(_text._SEPARATOR)
        expected += _text._words(text)
    assert _text._joined_words(texts) == expected


@settings(max_examples=100, deadline=None)
@given(places=st.lists(st.integers(0, 60), unique=True, max_size=30))
def test_order_of_places_is_their_argsort(places: list[int]) -> None:
    array = np.array(places, np.int64)
    assert_array_equal(_text._order_of_places(array, 61), np.argsort(array))


PIECE = st.one_of(LINE, st.sampled_from(["", "\x00", "cat\x00mat", "Σ", "the cat"]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.lists(PIECE, max_size=5), min_size=1, max_size=6),
       held=st.lists(PIECE, max_size=4), long=st.integers(2, 12))
def test_pieces_with_nuls_empties_and_long_held_ones_count_as_their_texts(
        texts: list[list[str]], held: list[str], long: int) -> None:
    """Pieces cut at spaces, some counted before (some too long for their ranks), some not."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text, "MAX_RANKED_CHARS", long)
        _count_pieces(texts, held)


def _count_pieces(texts: list[list[str]], held: list[str]) -> None:
    spaced = [[f" {piece} " for piece in pieces] for pieces in texts]
    units = TfidfCache()
    units.matrix([f" {piece} " for piece in held] + [p for pieces in spaced for p in pieces][:3])
    ours = TfidfCache(stop_words="english")
    numbers = ours.add_joined(spaced, units)
    whole = TfidfCache(stop_words="english")
    reference = whole.matrix(["".join(pieces) for pieces in spaced])
    matrix = ours.rows_matrix(numbers)
    for part in ("indptr", "indices", "data"):
        assert_array_equal(getattr(matrix, part), getattr(reference, part))
    assert list(ours._vocab.items()) == list(whole._vocab.items())


def _batches_by_loop(lengths: list[int], per_batch: int, chars: int) -> list[int]:
    """The batch sizes the text-by-text loop made."""
    sizes, start = [], 0
    while start < len(lengths):
        end, total = start + 1, lengths[start]
        while end < len(lengths) and end - start < per_batch and total + lengths[end] <= chars:
            total += lengths[end]
            end += 1
        sizes.append(end - start)
        start = end
    return sizes


@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(0, 9), max_size=40), per_batch=st.integers(1, 6),
       chars=st.integers(0, 20))
def test_batches_end_where_the_text_by_text_loop_ended_them(
        lengths: list[int], per_batch: int, chars: int) -> None:
    texts = ["w" * n + " " * k for k, n in enumerate(lengths)]  # distinct texts
    made: list[int] = []
    cache = TfidfCache()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text, "_BATCH_TEXTS", per_batch)
        patch.setattr(_text, "_BATCH_CHARS", chars)
        patch.setattr(cache, "_add_batch", lambda batch: made.append(len(batch)))
        cache._add(texts)
    assert made == _batches_by_loop([len(t) for t in texts], per_batch, chars)


def _sibling_groups_by_nodes(tree: object) -> tuple[list[int], list[int], list[int]]:
    """The definition, node by node."""
    parents: list[int] = []
    rows: list[int] = []
    owner: list[int] = []
    for node in tree.nodes:  # type: ignore[attr-defined]
        if len(node.children) < 2:
            continue
        owner.extend([len(parents)] * len(node.children))
        parents.append(node.id)
        rows.extend(c - 1 for c in node.children)
    return parents, rows, owner


@settings(max_examples=100, deadline=None)
@given(fanouts=st.lists(st.integers(0, 4), max_size=30))
def test_sibling_groups_match_the_node_by_node_definition(fanouts: list[int]) -> None:
    nodes = [SimpleNamespace(id=0, children=[])]
    for k, fanout in enumerate(fanouts):  # node k gets up to `fanout` new children
        parent = nodes[min(k, len(nodes) - 1)]
        for _ in range(fanout):
            parent.children.append(len(nodes))
            nodes.append(SimpleNamespace(id=len(nodes), children=[]))
    tree = SimpleNamespace(nodes=nodes)
    parents, rows, owner = _taxonomy._sibling_groups(tree)  # type: ignore[arg-type]
    expected = _sibling_groups_by_nodes(tree)
    assert (parents, rows.tolist(), owner.tolist()) == expected
    assert rows.dtype == np.int64 and owner.dtype == np.int64
