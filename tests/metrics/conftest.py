"""Fixtures for the metrics tests: a verbatim LoCoMo build with one snapshot per session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from metrics_helpers import verbatim_sessions

from memdir.store import Store
from memdir.store.history import History

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo10.json"


@pytest.fixture(scope="session")
def locomo_conv48(tmp_path_factory: pytest.TempPathFactory) -> History:
    """A verbatim build of LoCoMo conv-48 (30 sessions), one snapshot per session."""
    if not LOCOMO.is_file():
        pytest.skip("../shared/data/locomo is not present on this machine")
    conversation = next(c for c in json.loads(LOCOMO.read_text()) if c["sample_id"] == "conv-48")
    store = Store(tmp_path_factory.mktemp("conv48") / "memories", create=True)
    history = History(store)
    history.init()
    for path, text in verbatim_sessions(conversation):
        store.create(path, text)
        history.snapshot(f"session {path[-5:-3]}")
    return history
