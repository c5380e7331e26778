"""The harness study: one curated store per harness, each built and searched through its tools.

A scripted ``mockllm/model`` plays both roles and works only with the tools it is
offered: under Center it greps and creates files, under Center+BM25 it ranks
files with ``search`` and links the best hit, under Shell it writes with ``bash``
here-documents (builders) and greps with ``bash`` over a read-only store
(searchers). LoCoMo conv-50 is built one chunk per session and two questions
are asked of each store; the test checks that the three stores differ, that
every build and every search went through its own harness's tools and prompt,
and that the report's Tables 9 and 10 show one row per harness from those records.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import Model, ModelOutput, get_model

from memdir.agents import load_prompt
from memdir.conversation import SESSION_CHUNK_TOKENS
from memdir.store import Frontmatter, Store, render_file
from memdir.study import StudyConfig, build_tables, load_run, read_manifest, run_study
from memdir.tools._sandbox import available_backends
from scripted import calls, text

from .helpers import SHARED_DATA

pytestmark = pytest.mark.slow  # three 30-chunk builds, about half a minute

HARNESSES = ["center", "center+bm25", "shell"]
WRITTEN_SESSIONS = 3
"""The scripted builder files the first three sessions and passes over the rest."""
_PATH = re.compile(r"/memories/[\w./-]+\.md")


def _note(name: str, body: str) -> str:
    return render_file(Frontmatter(name=name, description=f"Notes: {name}"), body)


def _last_tool_text(input: list[Any]) -> str:
    return next((str(m.text) for m in reversed(input) if m.role == "tool"), "")


class HarnessPlayer:
    """The builder and the searcher at once, each acting with the tools it is given."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any
                 ) -> ModelOutput:
        names = {t.name for t in tools}
        harness = "shell" if "bash" in names else "center+bm25" if "search" in names else "center"
        rounds = sum(1 for m in input if m.role == "assistant")
        if str(input[0].text).startswith("You answer questions"):
            self.calls[("search", harness)] += 1
            return self._search(harness, rounds, input)
        self.calls[("build", harness)] += 1
        return self._build(harness, rounds, str(input[1].text), input)

    def _build(self, harness: str, rounds: int, user: str, input: list[Any]) -> ModelOutput:
        found = re.search(r"^# Session (\d+)", user, re.MULTILINE)
        assert found, "the chunk turn names no session"
        session = int(found.group(1))
        turn = re.search(r"^(\[S\d+T\d+\] .*)$", user, re.MULTILINE)
        line = f"- {turn.group(1) if turn else ''}"
        if session > WRITTEN_SESSIONS or rounds == (2 if harness == "center+bm25" else 1):
            return text(f"Filed session {session}." if session <= WRITTEN_SESSIONS
                        else "Nothing new to file.")
        if harness == "shell":
            note = _note(f"session-{session}", f"# Session {session}\n\n{line}\n")
            command = (f"mkdir -p /memories/log && cat > /memories/log/session-{session}.md "
                       f"<<'EOF'\n{note}EOF\ngrep -c . /memories/log/session-{session}.md")
            return calls(("bash", {"command": command}))
        if harness == "center+bm25":
            if rounds == 0:
                return calls(("search", {"query": "session notes"}))
            hits = _PATH.findall(_last_tool_text(input))
            link = f"\nsee {hits[0]}\n" if hits else ""
            return calls(("create", {"path": f"/memories/ranked/s{session}.md",
                                     "file_text": _note(f"s{session}",
                                                        f"# Session {session}\n\n{line}\n{link}")}))
        return calls(("grep", {"pattern": "Session", "ignore_case": True}),
                     ("create", {"path": f"/memories/sessions/s{session}.md",
                                 "file_text": _note(f"s{session}",
                                                    f"# Session {session}\n\n{line}\n")}))

    def _search(self, harness: str, rounds: int, input: list[Any]) -> ModelOutput:
        if rounds == 0:
            if harness == "shell":
                return calls(("bash", {"command": "grep -rn -i -m2 'session' /memories"}))
            if harness == "center+bm25":
                return calls(("search", {"query": "session"}))
            return calls(("grep", {"pattern": "session", "ignore_case": True}))
        hits = _PATH.findall(_last_tool_text(input))
        assert hits, f"the {harness} search found nothing"
        return text(f"The notes of session 1 say so [{hits[0]}].")

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)


@pytest.fixture(scope="module")
def harness_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, HarnessPlayer]:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    if not available_backends():
        pytest.skip("the Shell harness needs bubblewrap or unshare namespaces")
    tmp = tmp_path_factory.mktemp("harness")
    config = StudyConfig.model_validate({
        "name": "harness", "data_dir": str(SHARED_DATA),
        "benchmarks": [{"name": "locomo", "conversations": ["conv-50"], "limit": 2}],
        "variants": ["curated"], "harnesses": HARNESSES,
        "search": {"models": ["mockllm/model"], "max_rounds": 3},
        "management": {"models": ["mockllm/model"], "max_rounds": 4},
        "build_cache": str(tmp / "cache"), "chunk_tokens": SESSION_CHUNK_TOKENS,
    })
    player = HarnessPlayer()
    statuses = run_study(config, tmp / "run", models={"mockllm/model": player.model()})
    assert [(s.cell.harness, s.status, s.answered) for s in statuses] == [
        (h, "complete", 2) for h in HARNESSES], [s.reason for s in statuses]
    return tmp / "run", player


def _tool_names(episode: Any) -> set[str]:
    return {t.name for call in episode.calls for t in call.tool_calls}


def test_each_harness_builds_its_own_store_through_its_own_tools(
        harness_run: tuple[Path, HarnessPlayer]) -> None:
    run = load_run(harness_run[0])
    stores = {info.build.harness: info for info in run.stores.values() if info.build}
    assert set(stores) == set(HARNESSES)
    assert [k for k in sorted(info.key for info in stores.values())] == sorted([
        "locomo__conv-50__curated__mockllm-model",
        "locomo__conv-50__curated__mockllm-model__center-bm25",
        "locomo__conv-50__curated__mockllm-model__shell"])
    toolsets = {"center": "write", "center+bm25": "bm25-write", "shell": "shell"}
    used = {"center": {"grep", "create"}, "center+bm25": {"search", "create"},
            "shell": {"bash"}}
    files: dict[str, set[str]] = {}
    for harness, info in stores.items():
        build = info.build
        assert build is not None and build.toolset == toolsets[harness]
        episodes = [u.episode for u in build.units if u.episode is not None]
        assert len(episodes) == len(build.units) == 30
        assert {e.toolset for e in episodes} == {toolsets[harness]}
        assert set().union(*(_tool_names(e) for e in episodes)) == used[harness]
        prompt = "management-conversation" + ("" if harness == "center" else f"@{harness}")
        assert build.prompt_name == prompt
        assert build.prompt_hash == load_prompt(prompt).sha256
        assert build.tool_calls == WRITTEN_SESSIONS * (1 if harness == "shell" else 2)
        assert build.model_calls == sum(u.rounds for u in build.units)
        if harness != "center":
            assert f"__{harness.replace('+', '-')}__" in Path(info.path or "").parts[-2]
        files[harness] = set(Store(info.path or "").files())
    assert files["shell"] == {f"/memories/log/session-{n}.md" for n in (1, 2, 3)}
    assert files["center"] == {f"/memories/sessions/s{n}.md" for n in (1, 2, 3)}
    assert files["center+bm25"] == {f"/memories/ranked/s{n}.md" for n in (1, 2, 3)}
    bm25 = Store(stores["center+bm25"].path or "")
    assert "see /memories/ranked/s1.md" in bm25.read("/memories/ranked/s2.md")


def test_each_harness_searches_through_its_own_tools_and_prompt(
        harness_run: tuple[Path, HarnessPlayer]) -> None:
    run_dir, player = harness_run
    run = load_run(run_dir)
    by_harness = {s.cell.harness: s for s in run.statuses}
    used = {"center": ("read", {"grep"}), "center+bm25": ("bm25", {"search"}),
            "shell": ("shell-read", {"bash"})}
    for harness, status in by_harness.items():
        records = run.records[status.cell.key]
        assert len(records) == 2
        toolset, tools = used[harness]
        prompt = "search-hierarchical" + ("" if harness == "center" else f"@{harness}")
        for record in records:
            assert record.episode.toolset == toolset
            assert _tool_names(record.episode) == tools
            assert record.episode.prompt_name == prompt
            assert record.episode.prompt_hash == load_prompt(prompt).sha256
            assert record.citations, record.answer
    assert player.calls[("search", "shell")] == 4  # two rounds for each question


def test_the_manifest_pins_the_prompts_and_tools_each_harness_sent(
        harness_run: tuple[Path, HarnessPlayer]) -> None:
    manifest = read_manifest(harness_run[0])
    assert manifest is not None
    for harness in HARNESSES:
        suffix = "" if harness == "center" else f"@{harness}"
        for prompt in ("search-hierarchical", "management-conversation"):
            name = prompt + suffix
            assert manifest["prompt_hashes"][name] == load_prompt(name).sha256
    hashes = {manifest["prompt_hashes"][f"search-hierarchical{s}"]
              for s in ("", "@center+bm25", "@shell")}
    assert len(hashes) == 3
    assert {"read", "bm25", "shell-read", "write", "bm25-write", "shell"} <= set(
        manifest["toolset_digests"])


def test_the_report_draws_tables_9_and_10_from_the_three_stores(
        harness_run: tuple[Path, HarnessPlayer]) -> None:
    tables = {t.name: t for t in build_tables(load_run(harness_run[0]))}
    quality, cost = tables["table9"], tables["table10"]
    column = quality.columns.index("harness")
    assert [row[column] for row in quality.rows] == HARNESSES
    assert [row[quality.columns.index("n")] for row in quality.rows] == [2, 2, 2]
    rows = {row[column]: dict(zip(cost.columns, row, strict=True)) for row in cost.rows}
    assert list(rows) == HARNESSES
    for harness, row in rows.items():
        assert row["build units"] == 30 and row["files"] == WRITTEN_SESSIONS
        calls_per_chunk = WRITTEN_SESSIONS * (1 if harness == "shell" else 2) / 30
        assert row["build tool calls/unit"] == pytest.approx(calls_per_chunk)
        assert row["rounds/query"] == 2 and row["tool calls/query"] == 1
    assert rows["center"]["folders"] == rows["shell"]["folders"] == 1
