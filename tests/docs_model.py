"""A fake OpenAI server on loopback, so that docs examples naming an OpenAI model run.

The docs show commands such as ``MEMDIR_MODEL=openai/gpt-5.4-mini memdir ask ...``;
tests/test_docs_examples.py runs them as written with ``OPENAI_BASE_URL`` pointing
here and a dummy key. It answers the Responses API (inspect_ai's route for the
GPT-5 family) and chat completions, every reply with its usage: a request that
offers tools (a search or management agent) gets a short final answer without
calling one, and a judge's request (no tools; it asks for JSON with "correct")
gets a verdict. What it checks is that each command runs end to end through the
real provider code, not what a model would answer.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ANSWER", "FakeOpenAIServer"]

ANSWER = "A scripted answer from the docs test's fake model; it searched nothing."
_VERDICT = json.dumps({"correct": 1, "reason": "scripted verdict of the docs test"})


def _reply_text(body: dict[str, Any]) -> str:
    if body.get("tools"):
        return ANSWER
    return _VERDICT if "correct" in json.dumps(body).lower() else ANSWER


def _response(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_docs", "object": "response", "created_at": 0, "status": "completed",
        "model": str(body.get("model", "fake")), "parallel_tool_calls": False,
        "tool_choice": "auto", "tools": [],
        "output": [{"type": "message", "id": "msg_docs", "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": _reply_text(body),
                                 "annotations": []}]}],
        "usage": {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chat_docs", "object": "chat.completion", "created": 0,
        "model": str(body.get("model", "fake")),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": _reply_text(body)}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        self.server.requests += 1
        reply = _response(body) if self.path.endswith("/responses") else _completion(body)
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    requests = 0


class FakeOpenAIServer:
    """The server, on a free loopback port in a daemon thread; ``with`` starts and stops it."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> int:
        """Requests answered so far."""
        return self._server.requests

    def __enter__(self) -> FakeOpenAIServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
