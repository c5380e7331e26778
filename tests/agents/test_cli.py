"""``memdir ask`` and ``memdir ingest`` end to end, in process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, ModelAPI, modelapi
from typer.testing import CliRunner

from memdir.cli import app
from memdir.config import get_settings
from memdir.store import Store
from scripted import calls, text

runner = CliRunner()
_DEFAULT = GenerateConfig()

NOTE = "---\nname: ana\ndescription: About Ana\n---\n- Ana weaves [S1T1]\n"


class _ScriptedAPI(ModelAPI):
    """A test provider: creates one note on its first call per chunk, then summarises."""

    def __init__(self, model_name: str, base_url: str | None = None,
                 api_key: str | None = None, config: GenerateConfig = _DEFAULT,
                 **kwargs: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        if self.model_name == "broken":
            raise RuntimeError("the provider is down")
        if input[-1].role == "tool":
            return text("Filed Ana's hobby.")
        return calls(("create", {"path": "/memories/ana.md", "file_text": NOTE}))

    def max_tokens(self) -> int | None:
        return None


@modelapi(name="h5script")
def _scripted() -> type[ModelAPI]:
    return _ScriptedAPI


@pytest.fixture(autouse=True)
def _no_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMDIR_MODEL", raising=False)
    get_settings.cache_clear()


def _conv(tmp_path: Path) -> Path:
    path = tmp_path / "talk.json"
    path.write_text(json.dumps({"speakers": ["Ana"], "sessions": [
        {"id": 1, "date": "2024-01-01", "turns": [{"speaker": "Ana", "text": "I weave."}]}]}))
    return path


def test_ask_without_a_model_uses_the_labelled_offline_baseline(store: Store) -> None:
    store.create("/memories/ana.md", NOTE)
    result = runner.invoke(app, ["ask", str(store.root), "What does Ana weave?"])
    assert result.exit_code == 0, result.output
    assert "offline grep-reader" in result.output and "zero-cost" in result.output
    assert "[/memories/ana.md:L5] found" in result.output
    result = runner.invoke(app, ["ask", str(store.root), "What does Ana weave?", "--json"])
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert data["zero_cost_baseline"] is True and data["model"] == "memdir/grep-reader"
    assert data["citations"][0]["resolved"] is True and data["cost"] == 0.0
    assert data["records"][0]["schema_version"] == 2


def test_ask_errors_say_what_to_do(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", str(tmp_path / "none"), "q"])
    assert result.exit_code == 2 and "memdir init" in result.output
    result = runner.invoke(app, ["ask", str(tmp_path), "q", "--variant", "weird"])
    assert result.exit_code == 2 and "choose one of" in result.output


def test_ingest_needs_a_model(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(tmp_path / "s"), str(_conv(tmp_path))])
    assert result.exit_code == 2 and "MEMDIR_MODEL" in result.output


def test_ingest_runs_the_management_agent(tmp_path: Path) -> None:
    target = tmp_path / "s"
    result = runner.invoke(app, ["ingest", str(target), str(_conv(tmp_path)),
                                 "--model", "h5script/ok"])
    assert result.exit_code == 0, result.output
    assert "chunk 1/1" in result.output and "2 round(s)" in result.output
    assert Store(target).read("/memories/ana.md") == NOTE


def test_a_failed_ingest_exits_2_and_says_how_to_resume(tmp_path: Path) -> None:
    target = tmp_path / "s"
    result = runner.invoke(app, ["ingest", str(target), str(_conv(tmp_path)),
                                 "--model", "h5script/broken"])
    assert result.exit_code == 2
    assert "restored" in result.output and "--skip 0" in result.output
    assert Store(target).files() == []


def test_cli_names_match_the_library() -> None:
    from memdir import agents
    from memdir.cli import ask as ask_cli

    assert ask_cli.OFFLINE_MODEL == agents.OFFLINE_MODEL
