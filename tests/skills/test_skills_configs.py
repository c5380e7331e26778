"""The shipped skills configs: dry runs list memdir's cells beside the paper's count.

The data folder comes from ``--data`` or ``MEMDIR_DATA_DIR``, never from where the
command runs; a dry run checks it as the real run would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.config import get_settings
from memdir.skills import SPLIT, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SHIPPED = {  # config -> (memdir's cells, the paper's, a key that must be listed)
    "skills-three-chain.yaml": (10, 10, "three-chain.episode_log.exec-gpt-4_1-mini"),
    "skills-full-chain.yaml": (10, 10, "full-chain.curated_skills_mem_gs.cur-gpt-5_4-mini."
                                       "exec-gpt-4_1"),
    "skills-curator-ladder.yaml": (6, 6, "full-chain.curated_skills_mem_gs.cur-gpt-5_4-nano."
                                         "exec-gpt-4_1-mini"),
    "skills-harness.yaml": (3, 3, "full-chain.curated_skills_mem_gs.cur-gpt-5_4-mini."
                                  "exec-gpt-4_1.h-shell"),
}


def test_every_shipped_skills_config_is_listed_here() -> None:
    assert {p.name for p in CONFIGS.glob("skills-*.yaml")} == set(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_dry_run_lists_memdirs_cells_beside_the_papers(
        name: str, shared_data: Path, no_data_env: None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ours, papers, key = SHIPPED[name]
    config = load_config(CONFIGS / name)
    assert config.data is None and config.paper is not None
    assert len(config.cells()) == ours and config.paper.cells == papers
    monkeypatch.chdir(tmp_path)  # the folder a command runs in plays no part
    result = CliRunner().invoke(app, ["skills", "run", str(CONFIGS / name), "--dry-run",
                                      "--data", str(shared_data)])
    assert result.exit_code == 0, result.output
    assert f"{ours} cell(s); the paper: {papers} ({config.paper.table})" in result.output
    assert f"- {key}  " in result.output and "nothing was run" in result.output
    assert f"data: {shared_data / SPLIT}" in result.output
    assert not any(tmp_path.iterdir())  # a dry run writes nothing
    monkeypatch.setenv("MEMDIR_DATA_DIR", str(shared_data))
    get_settings.cache_clear()
    from_env = CliRunner().invoke(app, ["skills", "run", str(CONFIGS / name), "--dry-run"])
    assert from_env.exit_code == 0 and f"data: {shared_data / SPLIT}" in from_env.output


def test_without_a_data_folder_the_dry_run_fails_as_the_run_would(no_data_env: None) -> None:
    config = CONFIGS / "skills-three-chain.yaml"
    for extra in (["--dry-run"], []):
        result = CliRunner().invoke(app, ["skills", "run", str(config), *extra])
        assert result.exit_code == 2, result.output
        assert "no data folder" in result.output and "MEMDIR_DATA_DIR" in result.output
        assert "--data" in result.output.split("hint:")[1]
    assert "10 cell(s)" in CliRunner().invoke(app, ["skills", "run", str(config),
                                                    "--dry-run"]).output


def test_a_missing_split_or_unknown_task_fails_the_dry_run(
        tmp_path: Path, no_data_env: None, shared_data: Path) -> None:
    config = CONFIGS / "skills-full-chain.yaml"
    result = CliRunner().invoke(app, ["skills", "run", str(config), "--dry-run",
                                      "--data", str(tmp_path)])
    assert result.exit_code == 2 and "no ALFWorld split" in result.output
    custom = tmp_path / "c.yaml"
    custom.write_text("name: c\ndata: split\noutput: out\nvariants: [none]\n"
                      "task_ids: [nope/trial]\n", encoding="utf-8")
    (tmp_path / "split").symlink_to(shared_data / SPLIT)
    assert load_config(custom).data == tmp_path / "split"  # from the file's folder
    bad = CliRunner().invoke(app, ["skills", "run", str(custom), "--dry-run"])
    assert bad.exit_code == 2 and "not in the split" in bad.output


def test_unknown_cells_are_refused_with_a_hint(no_data_env: None) -> None:
    bad = CliRunner().invoke(app, ["skills", "run", str(CONFIGS / "skills-full-chain.yaml"),
                                   "--cell", "nope"])
    assert bad.exit_code == 2 and "unknown cell" in bad.output and "--dry-run" in bad.output
