"""Model providers that fail well, against a fake OpenAI-compatible server on loopback.

Every failure ends inside the call's time budget with the server's own words; a
reply without usage is unknown usage (no cost), not zero; a missing API key or
provider SDK is one plain line and exit 2 through the real command line.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.model import GenerateConfig, ModelUsage
from typer.testing import CliRunner

from memdir.agents import (
    AgentError,
    ModelSetupError,
    PriceTable,
    Usage,
    load_prompt,
    resolve_model,
    role_config,
    run_agent,
    usage_from_inspect,
)
from memdir.cli import app
from memdir.config import get_settings
from memdir.skills._roles import EXECUTION_ROLE
from memdir.store import Store

from .fake_openai import CRASH, GATEWAY, LOGIN, FakeOpenAI

BUDGET = 8
"""Seconds each failing call may take, retries included."""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    monkeypatch.setenv("FAKE_API_KEY", "test-key")
    yield server
    server.close()


async def _run(fake: FakeOpenAI, retries: int = 2) -> AgentError | Usage:
    # base_url given explicitly: inspect_ai keeps models by name and arguments, so each
    # test's server (on its own port) gets its own client.
    llm = resolve_model("openai-api/fake/m", max_retries=retries, timeout=BUDGET,
                        base_url=fake.base_url)
    try:
        run = await run_agent(llm, EXECUTION_ROLE, load_prompt("search-closed-book"),
                              "Say hello.")
    except AgentError as exc:
        return exc
    return run.record.usage


@pytest.mark.parametrize(
    ("mode", "said"),
    [("500", CRASH), ("502-html", GATEWAY), ("html", LOGIN),
     ("drop", "Server disconnected without sending a response")],
)
async def test_each_failure_ends_in_bounded_time_with_the_servers_message(
    fake: FakeOpenAI, caplog: pytest.LogCaptureFixture, mode: str, said: str
) -> None:
    fake.mode = mode
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="memdir.agents"):
        outcome = await _run(fake)
    elapsed = time.monotonic() - began
    assert isinstance(outcome, AgentError)
    assert said in str(outcome) and "failed after" in str(outcome)
    assert outcome.record.error == str(outcome)
    assert elapsed < BUDGET + 10  # the budget plus one slow attempt, never minutes
    # One visible line per retry, each with the provider's message; the SDK's own
    # hidden retries are off, so the server saw exactly the attempts reported.
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert retries and all(said in line for line in retries)
    assert fake.requests == len(retries) + 1


async def test_a_reply_without_usage_is_unknown_not_free(fake: FakeOpenAI) -> None:
    fake.mode = "no-usage"
    usage = await _run(fake)
    assert isinstance(usage, Usage)
    assert not usage.known and usage.unreported == 1 and usage.total == 0
    prices = PriceTable.load()
    assert prices.cost("openai-api/fake/m", usage) is None
    assert prices.cost("openai/gpt-5.4-mini", usage + Usage(output=10)) is None
    fake.mode = "ok"
    reported = await _run(fake)
    assert isinstance(reported, Usage) and reported.known and reported.total == 12


def test_the_cached_part_is_never_taken_out_twice() -> None:
    # Already net of the cache (inspect_ai's convention), with a provider total that
    # leaves the cache out: for a provider whose converter normalises, trust input.
    mu = ModelUsage(input_tokens=1000, output_tokens=50, input_tokens_cache_read=800,
                    total_tokens=1050)
    assert usage_from_inspect(mu, "openai/gpt-5.4-mini").uncached_input == 1000
    assert usage_from_inspect(mu, "anthropic/claude-sonnet-4-5").uncached_input == 1000
    # A provider not known to normalise: the guard takes the cached part out, once.
    assert usage_from_inspect(mu, "together/some-model").uncached_input == 200
    assert usage_from_inspect(mu).uncached_input == 200


def test_ask_shows_each_retry_and_gives_up_inside_its_budget(
    fake: FakeOpenAI, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.mode = "500"
    monkeypatch.setenv("MEMDIR_ASK_TIMEOUT", "3")
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        model = "openai-api/fake/ask-test"  # a name no other test's cached client answers to
        result = runner.invoke(app, ["ask", str(store.root), "q", "--model", model])
        assert result.exit_code == 2
        assert result.output.count("retry:") >= 1 and CRASH in result.output
        assert "(3 s allowed)" in result.output and "Traceback" not in result.output
        result = runner.invoke(app, ["ask", str(store.root), "q", "--model", model, "--json"])
        assert result.exit_code == 2
        error = json.loads(result.stdout.strip().splitlines()[-1])
        assert CRASH in error["error"] and error["exit_code"] == 2 and error["hint"]
    finally:
        get_settings.cache_clear()


def test_setup_errors_are_plain_value_errors() -> None:
    assert issubclass(ModelSetupError, ValueError)
    env_key = "MEMDIRNOKEY_API_KEY"
    assert env_key not in os.environ
    with pytest.raises(ModelSetupError, match=env_key) as caught:
        resolve_model("openai-api/memdirnokey/m")
    assert "[" not in str(caught.value) and "\n" not in str(caught.value)


def _cli(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memdir", "ask", str(tmp_path), "q", *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )


@pytest.mark.slow
def test_missing_key_and_missing_sdk_through_the_real_cli(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("MEMDIR_MODEL", None)
    plain = _cli(tmp_path, "--model", "openai/gpt-5.4-mini", env=env)
    assert plain.returncode == 2, plain.stderr
    lines = [line for line in plain.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: cannot use openai/gpt-5.4-mini")
    assert "OPENAI_API_KEY" in lines[0]
    assert "Traceback" not in plain.stderr and "[bold]" not in plain.stderr
    assert len(lines) == 2 and lines[1].startswith("hint:")
    if importlib.util.find_spec("groq") is not None:
        pytest.skip("the groq SDK is installed here, so it cannot be missing")
    as_json = _cli(tmp_path, "--model", "groq/llama-3.3-70b", "--json", env=env)
    assert as_json.returncode == 2, as_json.stderr
    error = json.loads(as_json.stdout)
    assert "pip install groq" in error["error"] and "[bold]" not in error["error"]
    assert "Traceback" not in as_json.stderr


def test_ingest_names_the_missing_key_before_touching_the_store(tmp_path: Path) -> None:
    talk = tmp_path / "talk.json"
    talk.write_text(json.dumps({"speakers": ["Ana"], "sessions": [
        {"id": 1, "date": "2024-01-01", "turns": [{"speaker": "Ana", "text": "I weave."}]}]}))
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "s"), str(talk),
                                      "--model", "openai-api/memdirnokey/m"])
    assert result.exit_code == 2 and "MEMDIRNOKEY_API_KEY" in result.output
    assert "chunk" not in result.output and not (tmp_path / "s").exists()


async def test_no_uncounted_reasoning_summary_probe(fake: FakeOpenAI) -> None:
    # inspect_ai probes an OpenAI reasoning model once with a billed request when no
    # reasoning summary is configured; memdir's profile configures none explicitly.
    llm = resolve_model("openai/gpt-5-mini", max_retries=0, timeout=BUDGET,
                        base_url=fake.base_url, api_key="test-key")
    config = role_config("search").generate_config("openai/gpt-5-mini")
    assert config.reasoning_summary == "none"
    with contextlib.suppress(Exception):  # the fake serves chat completions, not responses
        await llm.generate("hi", config=config.merge(GenerateConfig(max_retries=0)))
    assert fake.requests == 1
    unset = resolve_model("openai/gpt-5-nano", max_retries=0, timeout=BUDGET,
                          base_url=fake.base_url, api_key="test-key")
    with contextlib.suppress(Exception):
        await unset.generate("hi", config=config.model_copy(
            update={"reasoning_summary": None, "max_retries": 0}))
    assert fake.requests == 3  # the probe, then the call: what memdir's setting avoids
