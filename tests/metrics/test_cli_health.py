"""``memdir health`` end to end: text, JSON, exit codes, reference locators, pictures."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from metrics_helpers import fill_people, fm
from typer.testing import CliRunner

from memdir.cli import health as health_cli
from memdir.cli import history as history_cli
from memdir.store import Store
from memdir.store.history import History


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test harness."""

    health_cli.register(app)
    history_cli.register(app)
    return app


RUN = CliRunner()


def test_healthy_store_exits_zero_and_prints_both_panels(store: Store) -> None:
    fill_people(store)
    result = RUN.invoke(_app(), ["health", str(store.root), "--tree"])
    assert result.exit_code == 0, result.output
    assert "Panel A - shape" in result.output and "Panel B - taxonomy adherence" in result.output
    assert "2 files in 1 folders with 2 headings" in result.output
    assert "    ├── alice.md  (Alice, a nurse in Lisbon)" in result.output
    assert "No alarms." in result.output


def test_alarms_exit_one_and_json_lists_them(store: Store) -> None:
    fill_people(store)
    store.create("/memories/notes.md", fm("notes", "Notes") + "see /memories/people/carol.md\n")
    result = RUN.invoke(_app(), ["health", str(store.root), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["healthy"] is False
    assert data["shape"]["files"] == 3 and data["shape"]["dangling_count"] == 1
    assert any("carol.md" in alarm for alarm in data["alarms"])


def test_lost_locators_against_an_earlier_step(store: Store, tmp_path: Path) -> None:
    fill_people(store)
    history = History(store)
    history.snapshot("chunk 2")
    # a condensing rewrite drops Alice's home and the [S2T3] locator
    store.write("/memories/people/alice.md", fm("alice", "Alice, a nurse in Lisbon")
                + "# Work\nAlice works night shifts as a nurse in Lisbon [S1T2].\n")
    store.write("/memories/people/bob.md", fm("bob", "Bob, a carpenter")
                + "Bob builds oak tables in his workshop and knows Alice.\n")
    result = RUN.invoke(_app(), ["health", str(store.root), "--against", "0", "--json"])
    assert result.exit_code == 1
    lost = json.loads(result.output)["lost_facts"]
    assert lost["reference"] == 4 and lost["missing"] == ["S1T4", "S2T1", "S2T3"]
    listing = tmp_path / "locators.txt"
    listing.write_text("S1T2\n")
    ok = RUN.invoke(_app(), ["health", str(store.root), "--locators", str(listing)])
    assert ok.exit_code == 0, ok.output


def test_history_flag_prints_growth_and_writes_pictures(store: Store, tmp_path: Path) -> None:
    history = History(store)
    fill_people(store)
    history.snapshot("chunk 1")
    store.create("/memories/trips.md", fm("trips", "Trips to Porto")
                 + "The May trip to Porto took three days by train [S3T1].\n")
    history.snapshot("chunk 2")
    plots = tmp_path / "plots"
    result = RUN.invoke(_app(), ["health", str(store.root), "--history", "--plots", str(plots)])
    assert result.exit_code == 0, result.output
    assert "| 1 | chunk 2 | 3 |" in result.output
    assert sorted(p.name for p in plots.iterdir()) == ["adherence.png", "growth.png", "tree.png"]


def test_bad_input_exits_two(tmp_path: Path) -> None:
    missing = RUN.invoke(_app(), ["health", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    store = Store(tmp_path / "s", create=True)
    no_history = RUN.invoke(_app(), ["health", str(store.root), "--against", "0"])
    assert no_history.exit_code == 2
    assert "no history yet" in no_history.output
    depth = RUN.invoke(_app(), ["health", str(store.root), "--heading-depth", "deep"])
    assert depth.exit_code == 2


def test_json_with_tree_carries_the_tree(store: Store) -> None:
    fill_people(store)
    data = json.loads(RUN.invoke(_app(), ["health", str(store.root), "--json", "--tree"]).output)
    kinds = [(node["kind"], node["name"]) for node in data["tree"]]
    assert kinds[0] == ("root", "/memories") and ("file", "alice.md") in kinds
    assert "tree" not in json.loads(RUN.invoke(_app(), ["health", str(store.root),
                                                        "--json"]).output)


def test_text_report_counts_alarms_by_kind_and_prints_only_the_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "memories", create=True)
    for k in range(12):  # twelve dangling references, one near-duplicate pair
        store.create(f"/memories/n{k}.md", fm(f"n{k}", f"note {k}")  # too short to compare
                     + f"see /memories/gone-{k}.md\n")
    text = "Alice plays the cello every evening with the orchestra in Lisbon.\n"
    store.create("/memories/a.md", fm("a", "alice cello") + text)
    store.create("/memories/b.md", fm("b", "alice cello again") + text)
    result = RUN.invoke(_app(), ["health", str(store.root), "--max-alarms", "5"])
    assert result.exit_code == 1
    assert "Alarms (13: 12 dangling reference, 1 near-duplicate)" in result.output
    assert result.output.count("  ! ") == 5
    assert "... 8 more: --max-alarms 0 prints every one" in result.output
    every = RUN.invoke(_app(), ["health", str(store.root), "--max-alarms", "0"])
    assert every.output.count("  ! ") == 13
    data = json.loads(RUN.invoke(_app(), ["health", str(store.root), "--json"]).output)
    assert len(data["alarms"]) == 13
    assert data["alarm_counts"] == {"dangling reference": 12, "near-duplicate": 1}
