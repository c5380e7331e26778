"""Metrics depend on the store's content only: not on file order, nor on where it lives."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_helpers import fm

from memdir.metrics import Measurer, StoreMetrics, measure_store
from memdir.store import Store

WORDS = ["alice", "lisbon", "nurse", "bread", "river", "garden", "piano", "trip", "cat", "oak"]
NAMES = ["notes", "people", "work", "home", "misc"]


@st.composite
def stores(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 7))):
        folders = draw(st.lists(st.sampled_from(NAMES), max_size=2))
        stem = draw(st.sampled_from(NAMES)) + f"-{len(files)}"
        path = "/memories/" + "".join(f"{f}-d/" for f in folders) + f"{stem}.md"
        body = []
        for _ in range(draw(st.integers(0, 4))):
            level = draw(st.integers(1, 3))
            body.append("#" * level + " " + draw(st.sampled_from(WORDS)).title())
            body.append(" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=15))))
        if not body:
            body.append(" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=15))))
        desc = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
        files[path] = fm(stem, desc) + "\n".join(body) + "\n"
    return files


def _numbers(m: StoreMetrics) -> dict[str, object]:
    data = m.to_dict()
    return {k: (round(v, 9) if isinstance(v, float) else v)
            for panel in data.values() for k, v in panel.items()  # type: ignore[attr-defined]
            if k not in ("leaks", "b1_worst_pair", "dangling")}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=stores(), order=st.randoms(use_true_random=False))
def test_file_order_does_not_matter(files: dict[str, str], order) -> None:  # type: ignore[no-untyped-def]
    items = list(files.items())
    order.shuffle(items)
    first = Measurer(max_pairs=20, seed=3).measure(files)
    shuffled = Measurer(max_pairs=20, seed=3).measure(dict(items))
    assert _numbers(first) == _numbers(shuffled)
    assert [leak.unit for leak in first.taxonomy.leaks] == [
        leak.unit for leak in shuffled.taxonomy.leaks
    ]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=stores())
def test_store_root_does_not_matter(files: dict[str, str]) -> None:
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for root in ("first/memories", "elsewhere/deeper/renamed-root"):
            store = Store(Path(scratch) / root, create=True)
            for path, text in files.items():
                store.write(path, text)
            results.append(measure_store(store, seed=5))
    assert _numbers(results[0]) == _numbers(results[1])
    assert results[0].shape.files == len(files)
