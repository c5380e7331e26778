"""Every shipped study config: the paper's cell count beside memdir's, prices, data folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from memdir.agents import PriceTable, is_offline
from memdir.cli import app
from memdir.config import get_settings
from memdir.study import DataError, PaperCount, load_config, resolve_data_dir, table_cells
from memdir.study._estimate import estimate_cells, paper_costs

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
STUDY_CONFIGS = sorted(p for p in CONFIGS.glob("*.yaml") if not p.name.startswith("skills-"))
"""The configs of ``memdir study run`` (the skills-* ones are ``memdir skills run``'s)."""
pytestmark = pytest.mark.usefixtures("no_data_env")


def test_the_conversational_studies_are_all_shipped() -> None:
    names = {p.stem for p in STUDY_CONFIGS}
    assert {"main-grid", "builder-ladder", "searcher-grid", "harness-study", "scale",
            "rebuild-32k", "offline-smoke"} <= names


@pytest.mark.parametrize("path", STUDY_CONFIGS, ids=lambda p: p.stem)
def test_each_config_counts_the_paper_s_cells_or_says_why_not(path: Path) -> None:
    config = load_config(path)
    assert config.paper is not None, f"{path.name} needs a paper: {{cells, table}} section"
    cells = config.cells()
    if table_cells(cells) != config.paper.cells:
        assert config.paper.note, f"{path.name}: counts differ and no note says why"


@pytest.mark.parametrize("path", STUDY_CONFIGS, ids=lambda p: p.stem)
def test_the_dry_run_prints_both_counts(path: Path, tmp_path: Path) -> None:
    # No data at all: the cells and counts are listed, then the run's own error.
    config = load_config(path)
    assert config.paper is not None
    cells = config.cells()
    result = CliRunner().invoke(app, ["study", "run", str(path), "--dry-run",
                                      "--data", str(tmp_path / "absent")])
    agree = "agree" if table_cells(cells) == config.paper.cells else "differ"
    assert (f"cells: memdir {len(cells)}, {table_cells(cells)} per test set (a tier's "
            f"conversations pooled); paper {config.paper.cells} ({config.paper.table}): "
            f"{agree}") in result.output
    assert result.exit_code == 2
    assert f"benchmark folder {tmp_path / 'absent'} (from --data) does not exist" in (
        result.output)


def test_the_studies_have_the_paper_s_shapes() -> None:
    ladder = load_config(CONFIGS / "builder-ladder.yaml").cells()
    assert {c.builder_model for c in ladder} == {
        "openai/gpt-5.4-nano", "openai/gpt-5.4-mini", "openai/gpt-5.4"}
    assert {(c.dataset_key, c.variant, c.search_model) for c in ladder} == {
        ("personamem-128k", "curated", "openai/gpt-5.4-mini")}
    grid = load_config(CONFIGS / "searcher-grid.yaml").cells()
    assert len({(c.builder_model, c.search_model) for c in grid}) == 9
    rebuild = load_config(CONFIGS / "rebuild-32k.yaml").cells()
    main = load_config(CONFIGS / "main-grid.yaml")
    main_32k = {c.conversation for c in main.cells() if c.dataset_key == "personamem-32k"}
    assert {c.conversation for c in rebuild} == main_32k and len(main_32k) == 3
    assert {c.builder_model for c in rebuild} == {"openai/gpt-5.4-mini", "openai/gpt-5.4"}
    scale = load_config(CONFIGS / "scale.yaml")
    assert {c.dataset_key for c in scale.cells()} == {"personamem-32k", "personamem-128k"}
    assert scale.variants == main.variants


def test_the_paper_count_is_checked_by_the_config_model(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    base = yaml.safe_load((CONFIGS / "offline-smoke.yaml").read_text())
    path.write_text(yaml.safe_dump({**base, "paper": {"cells": 0, "table": "Table 1"}}))
    with pytest.raises(ValueError, match="paper.cells: Input should be greater than or equal"):
        load_config(path)
    path.write_text(yaml.safe_dump({**base, "paper": {"cells": 6, "tabel": "Table 1"}}))
    with pytest.raises(ValueError, match="paper.tabel: Extra inputs are not permitted"):
        load_config(path)
    assert PaperCount(cells=2, table="Section D.1").note is None


@pytest.mark.parametrize("path", STUDY_CONFIGS, ids=lambda p: p.stem)
def test_every_model_has_a_price_and_every_searcher_an_estimate_or_a_reason(path: Path) -> None:
    config = load_config(path)
    prices = PriceTable.load()
    models = {*config.search.models, *(config.management.models if config.management else []),
              *([config.judge.model] if config.judge.model else [])}
    for model in models:
        assert prices.price(model) is not None, f"{model} is not in the price table"
    for estimate in estimate_cells(config):
        cell = estimate.cell
        if estimate.low_cents is None:
            assert "no reference figure" in estimate.note
            if paper_costs().scale(cell.search_model) is None and not is_offline(
                    cell.search_model):
                assert cell.search_model in estimate.note


def test_a_searcher_without_a_figure_is_named_not_guessed(tmp_path: Path) -> None:
    config = load_config(CONFIGS / "builder-ladder.yaml")
    other = config.model_copy(update={"search": config.search.model_copy(
        update={"models": ["anthropic/claude-some-model"]})})
    estimates = estimate_cells(other)
    assert len(estimates) == 3 and all(e.low_cents is None for e in estimates)
    assert all("no reference figure for search model anthropic/claude-some-model" in e.note
               for e in estimates)


def test_a_relative_data_folder_is_read_from_the_config_file_s_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "configs").mkdir()
    path = tmp_path / "configs" / "x.yaml"
    base = yaml.safe_load((CONFIGS / "offline-smoke.yaml").read_text())
    path.write_text(yaml.safe_dump({**base, "data": "../data"}))
    monkeypatch.chdir(tmp_path / "configs")  # wherever the command runs
    config = load_config(Path("x.yaml"))
    assert resolve_data_dir(config) == tmp_path / "data"
    monkeypatch.chdir("/")
    assert resolve_data_dir(load_config(path)) == tmp_path / "data"


def test_data_comes_from_the_option_then_the_environment_then_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("option", "env", "config"):
        (tmp_path / name).mkdir()
    path = tmp_path / "x.yaml"
    base = yaml.safe_load((CONFIGS / "offline-smoke.yaml").read_text())
    path.write_text(yaml.safe_dump({**base, "data": "config"}))
    config = load_config(path)
    assert resolve_data_dir(config) == tmp_path / "config"
    monkeypatch.setenv("MEMDIR_DATA_DIR", str(tmp_path / "env"))
    get_settings.cache_clear()
    assert resolve_data_dir(config) == tmp_path / "env"
    assert resolve_data_dir(config, tmp_path / "option") == tmp_path / "option"
    monkeypatch.setenv("MEMDIR_DATA_DIR", str(tmp_path / "gone"))
    get_settings.cache_clear()
    with pytest.raises(DataError, match=r"gone \(from MEMDIR_DATA_DIR\) does not exist") as err:
        resolve_data_dir(config)
    assert "point MEMDIR_DATA_DIR at the folder holding locomo/" in err.value.hint


def test_no_data_folder_anywhere_is_one_error_with_a_hint() -> None:
    config = load_config(CONFIGS / "offline-smoke.yaml")
    with pytest.raises(DataError, match="no benchmark folder") as err:
        resolve_data_dir(config)
    assert err.value.hint.startswith("pass --data DIR")
