"""A scripted search model's cell: its tool calls and results are in the eval log's transcript."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.log import read_eval_log, resolve_sample_attachments
from inspect_ai.model import ChatMessageTool

from memdir.study import load_run, run_study, run_study_async
from scripted import Script, calls, text

from .helpers import model_events, smoke_config


async def test_transcript_holds_the_agents_calls_and_what_it_was_shown(
        tmp_path: Path, shared_data: Path) -> None:
    script = Script([
        calls(("view", {"path": "/memories"})),
        calls(("grep", {"pattern": "Calvin"})),
        text("He moved to Boston [/memories/session-01.md]"),
        text("I do not know"),  # the second question: answered at once
    ])
    config = smoke_config(shared_data, 2, benchmarks=[
        {"name": "locomo", "conversations": ["conv-50"], "limit": 2}],
        variants=["verbatim"], search={"models": ["mockllm/model"]}, concurrency=1)
    [status] = await run_study_async(config, tmp_path, models={"mockllm/model": script.model()})
    script.assert_done()
    assert status.status == "complete" and status.answered == 2
    [attempt] = json.loads((tmp_path / "cells" / status.cell.key / "evals.json").read_text())
    log = read_eval_log(str(tmp_path / attempt["log"]))
    assert log.eval.task == status.cell.key and log.eval.model == "mockllm/model"
    assert log.eval.metadata is not None and log.eval.metadata["study"] == "smoke"
    assert log.eval.metadata["cell"] == status.cell.model_dump(mode="json")
    assert log.eval.metadata["search_role"]["prompt"] == "search-flat"
    assert log.eval.metadata["toolset_digest"] == status.toolset_digest
    first, second = sorted((resolve_sample_attachments(s) for s in log.samples or []),
                           key=lambda s: str(s.id))
    events = model_events(first, "mockllm/model")
    assert [[c.function for c in e.output.message.tool_calls or []] for e in events] == [
        ["view"], ["grep"], []]
    shown = [m for m in events[2].input if isinstance(m, ChatMessageTool)]
    assert [m.function for m in shown] == ["view", "grep"]
    assert "session-01.md" in str(shown[0].content)  # the listing the model was shown
    assert first.output.completion == "He moved to Boston [/memories/session-01.md]"
    assert len(model_events(second, "mockllm/model")) == 1
    [record] = [r for r in load_run(tmp_path).records[status.cell.key]
                if r.question_id == first.id]
    assert (record.rounds, record.tool_calls) == (3, 2)
    assert record.citations[0]["path"] == "/memories/session-01.md"


def test_closed_book_cell_runs_without_a_store(tmp_path: Path, shared_data: Path) -> None:
    script = Script([text("Boston"), text("no idea")])
    config = smoke_config(shared_data, 2, benchmarks=[
        {"name": "realtalk", "conversations": ["Chat_10"], "limit": 2}],
        variants=["closed-book"], search={"models": ["mockllm/model"]})
    [status] = run_study(config, tmp_path, models={"mockllm/model": script.model()})
    script.assert_done()
    assert status.status == "complete" and status.toolset_digest is None
    [attempt] = json.loads((tmp_path / "cells" / status.cell.key / "evals.json").read_text())
    log = read_eval_log(str(tmp_path / attempt["log"]))
    for sample in log.samples or []:
        [event] = model_events(sample, "mockllm/model")
        assert event.tools == []  # closed-book: one round, no tools offered
