"""A cell as an inspect_ai eval: samples scored, the agent's model calls in the transcript."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.log import read_eval_log

from memdir.study import eval_cells

from .helpers import smoke_config


async def test_cells_run_as_inspect_evals(tmp_path: Path, shared_data: Path) -> None:
    config = smoke_config(shared_data, 2, benchmarks=[
        {"name": "locomo", "conversations": ["conv-50"], "limit": 2}],
        variants=["verbatim", "curated"], management={"models": ["openai/gpt-5.4-mini"]})
    results = await eval_cells(config, shared_data, tmp_path / "stores", tmp_path / "logs")
    [(verbatim, log), (curated, reason)] = results
    assert isinstance(reason, str) and "model-driven builder" in reason
    assert not isinstance(log, str) and log.status == "success"
    stored = read_eval_log(log.location)
    assert stored.samples is not None and len(stored.samples) == 2
    for sample in stored.samples:
        score = sample.scores["study_grade"] if sample.scores else None
        assert score is not None and 0.0 <= float(score.value) <= 1.0  # type: ignore[arg-type]
        models = [e for e in sample.events if type(e).__name__ == "ModelEvent"]
        assert len(models) >= 2  # the grep-reader's rounds, each a logged model call
        assert sample.metadata["citations"]
    assert verbatim.key in log.eval.task
