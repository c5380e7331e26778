"""Run configs: the grid's cells, task subsets, and clear errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.skills import RunConfig, chains_for, list_tasks, load_config


def test_cells_cross_curators_only_with_curated_variants(tmp_path: Path) -> None:
    config = RunConfig(name="g", data=tmp_path, output=tmp_path / "out",
                       protocols=["full-chain", "three-chain"],
                       variants=["none", "episode_log", "curated_skills_mem"],
                       curators=["openai/a", "openai/b"], executions=["expert", "openai/x"])
    cells = config.cells()
    assert len(cells) == 2 * 2 * (1 + 1 + 2)
    assert len({c.key for c in cells}) == len(cells)
    assert all(c.curator is None for c in cells if c.variant in {"none", "episode_log"})
    assert config.models() == ["openai/gpt-5.4-mini", "openai/a", "openai/b", "openai/x"]
    assert all(c.retriever == "openai/gpt-5.4-mini" for c in cells if c.variant != "none")


def test_load_config_explains_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: g\ndata: x\noutput: y\nvariants: [everything]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="variants"):
        load_config(bad)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_config(broken)
    with pytest.raises(ValueError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_task_subsets_keep_the_protocol_order(shared_data: Path) -> None:
    split = shared_data / "alfworld" / "valid_seen"
    if not split.is_dir():
        pytest.skip("the ALFWorld split is not present")
    tasks = list_tasks(split)
    [(name, full)] = chains_for("full-chain", tasks, 0)
    assert name == "full" and len(full) == 140
    wanted = [full[9].task_id, full[2].task_id, full[40].task_id]
    [(_, subset)] = chains_for("full-chain", tasks, 0, task_ids=wanted)
    assert [t.task_id for t in subset] == [full[2].task_id, full[9].task_id, full[40].task_id]
    three = chains_for("three-chain", tasks, 0, limit=5)
    assert [n for n, _ in three] == ["three-0", "three-1", "three-2"]
    assert all(len(chain) == 5 for _, chain in three)
    with pytest.raises(ValueError, match="not in the split"):
        chains_for("full-chain", tasks, 0, task_ids=["nope/trial"])
    with pytest.raises(ValueError, match="unknown protocol"):
        chains_for("two-chain", tasks, 0)
