"""Health's CPU work: the cycle collector paused while a store is measured, same report."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator

import pytest
import typer
from metrics_helpers import fm
from typer.testing import CliRunner

from memdir.cli import health as health_cli
from memdir.metrics import _health
from memdir.metrics._health import collector_paused, health_report
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
    store.create("/memories/people/alice.md", fm("alice", "Alice, a nurse in Lisbon")
                 + "# Work\nAlice works night shifts as a nurse in Lisbon [S1T2].\n"
                 + "# Home\nAlice lives by the river with her sister [S1T4, S2T1].\n")
    store.create("/memories/people/bob.md", fm("bob", "Bob, a carpenter")
                 + "Bob builds oak tables in his workshop and knows Alice [S2T3]. "
                 + "see /memories/people/alice.md > # Work\n")
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
