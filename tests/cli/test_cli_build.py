"""``memdir build`` on the real benchmark files (skipped where absent), in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, ModelAPI, modelapi
from typer.testing import CliRunner

from memdir.builders import verbatim_files
from memdir.config import get_settings
from memdir.store import Store
from scripted import calls, text

_DEFAULT = GenerateConfig()
CALLS: list[int] = []


class _Folderer(ModelAPI):
    """A foldering model: moves the first session into a folder, then says it is done."""

    def __init__(self, model_name: str, base_url: str | None = None,
                 api_key: str | None = None, config: GenerateConfig = _DEFAULT,
                 **kwargs: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        CALLS.append(1)
        if input[-1].role == "tool":
            return text("Moved the first session into early/.")
        return calls(("rename", {"old_path": "/memories/session-01.md",
                                 "new_path": "/memories/early/session-01.md"}))

    def max_tokens(self) -> int | None:
        return None


@modelapi(name="buildscript")
def _folderer() -> type[ModelAPI]:
    return _Folderer


@pytest.fixture(autouse=True)
def _no_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMDIR_MODEL", raising=False)
    monkeypatch.delenv("MEMDIR_DATA_DIR", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _build(runner: CliRunner, *args: str) -> Any:
    from memdir.cli import app

    return runner.invoke(app, ["build", *args])


def test_verbatim_and_chunk_stores_of_real_conversations(
        runner: CliRunner, shared_data: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir.bench import load_benchmark

    dump = tmp_path / "dump"
    result = _build(runner, "verbatim", "locomo", "conv-50", str(dump), "--data",
                    str(shared_data))
    assert result.exit_code == 0, result.output
    conversation = load_benchmark("locomo", shared_data).conversation("conv-50")
    expected = verbatim_files(conversation)
    store = Store(dump)
    assert store.files() == sorted(p for p, _ in expected)
    assert all(store.read(p) == t for p, t in expected)
    monkeypatch.setenv("MEMDIR_DATA_DIR", str(shared_data))  # the data folder from the env
    get_settings.cache_clear()
    result = _build(runner, "chunk", "realtalk", "#1", str(tmp_path / "chunks"))
    assert result.exit_code == 0, result.output
    assert "chunk store of Chat_1" in result.output
    assert Store(tmp_path / "chunks").files()[0] == "/memories/chunks/session-01-chunk-01.md"


def test_a_model_built_store_is_built_once_and_reused(runner: CliRunner, shared_data: Path,
                                                      tmp_path: Path) -> None:
    CALLS.clear()
    args = ["foldered", "locomo", "conv-50", "--data", str(shared_data), "--model",
            "buildscript/fold", "--cache", str(tmp_path / "cache")]
    first = tmp_path / "first"
    result = _build(runner, args[0], args[1], args[2], str(first), *args[3:])
    assert result.exit_code == 0, result.output
    assert "early/session-01.md" in " ".join(Store(first).files())
    assert (first / ".git").is_dir() and len(CALLS) == 2
    again = _build(runner, args[0], args[1], args[2], str(tmp_path / "again"), *args[3:])
    assert again.exit_code == 0 and "reused from the cache" in again.output
    assert len(CALLS) == 2  # no model call the second time
    assert Store(tmp_path / "again").files() == Store(first).files()


@pytest.mark.parametrize(("args", "message", "hint"), [
    (["hierarchical", "locomo", "conv-50"], "unknown variant", "now 'curated'"),
    (["closed-book", "locomo", "conv-50"], "keeps no store", "build verbatim"),
    (["verbatim", "lme", "conv-50"], "unknown dataset 'lme'", "personamem-128k"),
    (["verbatim", "locomo", "conv-99"], "no conversation 'conv-99'", "conv-26, conv-30"),
    (["curated", "locomo", "conv-50"], "written by a model", "--model"),
])
def test_bad_arguments_say_what_to_use(args: list[str], message: str, hint: str,
                                       runner: CliRunner, shared_data: Path,
                                       tmp_path: Path) -> None:
    result = _build(runner, *args, str(tmp_path / "s"), "--data", str(shared_data))
    assert result.exit_code == 2
    assert message in result.output and hint in result.output
    assert not (tmp_path / "s").exists()


def test_no_data_folder_and_a_full_store_are_refused(runner: CliRunner,
                                                     tmp_path: Path) -> None:
    result = _build(runner, "verbatim", "locomo", "conv-50", str(tmp_path / "s"))
    assert result.exit_code == 2 and "MEMDIR_DATA_DIR" in result.output
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "a.md").write_text("x")
    result = _build(runner, "verbatim", "locomo", "conv-50", str(tmp_path / "full"))
    assert result.exit_code == 2 and "not an empty folder" in result.output


class _Silent(_Folderer):
    """A curating model that reads each chunk and keeps nothing (one call per chunk)."""

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        CALLS.append(1)
        return text("Nothing here is worth keeping.")


@modelapi(name="silentscript")
def _silent() -> type[ModelAPI]:
    return _Silent


def test_a_curated_build_shows_a_line_per_chunk_when_asked(runner: CliRunner,
                                                            shared_data: Path,
                                                            tmp_path: Path) -> None:
    from memdir.bench import load_benchmark
    from memdir.conversation import chunk_conversation

    conversation = load_benchmark("locomo", shared_data).conversation("conv-50")
    total = len(chunk_conversation(conversation, 4000))
    CALLS.clear()
    args = ["curated", "locomo", "conv-50", str(tmp_path / "s"), "--data", str(shared_data),
            "--model", "silentscript/none", "--cache", str(tmp_path / "cache")]
    result = _build(runner, *args, "--progress")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("chunk ")]
    assert [line.split(" · ")[0] for line in lines] == [
        f"chunk {n}/{total}" for n in range(1, total + 1)]
    assert "elapsed" in lines[0] and ("left" in lines[0]) is (total > 1)
    assert len(CALLS) == total
    # Without --progress, and with stderr not a terminal, a new build prints no line.
    quiet = _build(runner, *args[:3], str(tmp_path / "t"), *args[4:-1], str(tmp_path / "c2"))
    assert quiet.exit_code == 0 and len(CALLS) == 2 * total
    assert "chunk 1/" not in quiet.stderr


def test_a_model_without_its_key_is_refused_before_any_build_folder(
        runner: CliRunner, shared_data: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "AZUREAI_OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    cache = tmp_path / "cache"
    result = _build(runner, "curated", "locomo", "conv-50", str(tmp_path / "s"), "--data",
                    str(shared_data), "-m", "openai/gpt-5.4-mini", "--cache", str(cache))
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output and ".." not in result.output, result.output
    assert not cache.exists() and not (tmp_path / "s").exists()
