"""``memdir serve`` checked by the MCP Inspector's own command line, over stdio and HTTP.

The Inspector is the reference client of the MCP project; ``tools/list --strict``
reports every tool-schema portability problem and exits non-zero on an error.
scripts/test.sh installs it under ``.cache/mcp-inspector`` where npm is available;
without it these tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.sample import build_sample_store

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = Path(
    os.environ.get("MEMDIR_TEST_INSPECTOR",
                   ROOT / ".cache" / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector")
)
TIMEOUT = 120
TOKEN = "inspector-token-42"

pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists() or shutil.which("node") is None,
    reason="the MCP Inspector is not installed (scripts/test.sh installs it where npm exists)",
)

NEW_FILE = "---\nname: zoe\ndescription: Zoe, a new friend\n---\n# Zoe\n\nLikes kites.\n"

# One call of every tool of a set, in an order that leaves each call valid.
READ_CALLS: list[tuple[str, dict[str, object]]] = [
    ("view", {"path": "/memories"}),
    ("grep", {"pattern": "Biscuit"}),
    ("toc", {"path": "/memories/people/maya.md"}),
    ("section_read", {"path": "/memories/people/maya.md", "heading_path": ["## Home"]}),
]
WRITE_CALLS: list[tuple[str, dict[str, object]]] = [
    ("view", {"path": "/memories/people/maya.md", "view_range": [1, 3]}),
    ("create", {"path": "/memories/people/zoe.md", "file_text": NEW_FILE}),
    ("str_replace", {"path": "/memories/people/zoe.md", "old_str": "Likes kites.",
                     "new_str": "Likes kites and tea."}),
    ("insert", {"path": "/memories/people/zoe.md", "insert_line": 5, "insert_text": "Met 2025."}),
    ("grep", {"pattern": "kites and tea"}),
    ("rename", {"old_path": "/memories/people/zoe.md", "new_path": "/memories/people/zoe-k.md"}),
    ("delete", {"path": "/memories/people/zoe-k.md"}),
]


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    build_sample_store(tmp_path / "s")
    return tmp_path / "s"


def _serve(store_dir: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "memdir", "serve", str(store_dir), *flags]


def _inspect(target: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    # The target goes first: --tool-arg takes every word after it.
    return subprocess.run([str(INSPECTOR), "--cli", *target, *args], capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)


def _call_args(name: str, arguments: dict[str, object]) -> list[str]:
    pairs = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in arguments.items()]
    return ["--method", "tools/call", "--tool-name", name, "--tool-arg", *pairs]


def _check_set(target: list[str], names: set[str],
               calls: list[tuple[str, dict[str, object]]]) -> None:
    listed = _inspect(target, "--method", "tools/list", "--strict")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.strip() == "", listed.stderr  # --strict: no portability problem
    assert {t["name"] for t in json.loads(listed.stdout)["tools"]} == names
    assert {name for name, _ in calls} == names
    for name, arguments in calls:
        called = _inspect(target, *_call_args(name, arguments))
        assert called.returncode == 0, f"{name}: {called.stdout} {called.stderr}"
        result = json.loads(called.stdout)
        assert result["isError"] is False, (name, result)


def test_stdio_read_set(store_dir: Path) -> None:
    _check_set(_serve(store_dir), {"view", "grep", "toc", "section_read"}, READ_CALLS)


def test_stdio_write_set(store_dir: Path) -> None:
    _check_set(_serve(store_dir, "--write"),
               {"view", "create", "str_replace", "insert", "delete", "rename", "grep"},
               WRITE_CALLS)
    assert not (store_dir / "people" / "zoe-k.md").exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_url(store_dir: Path) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        _serve(store_dir, "--write", "--transport", "http", "--port", str(port),
               "--token", TOKEN),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_http_write_set(http_url: str) -> None:
    target = ["--transport", "http", "--server-url", http_url,
              "--header", f"Authorization: Bearer {TOKEN}"]
    _check_set(target, {"view", "create", "str_replace", "insert", "delete", "rename", "grep"},
               WRITE_CALLS)


def test_http_without_the_token_fails_with_a_message(http_url: str) -> None:
    refused = _inspect(["--transport", "http", "--server-url", http_url],
                       "--method", "tools/list")
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "OAuth" not in said  # no OAuth flow: the server takes a bearer token only
    assert "token" in said.lower()
