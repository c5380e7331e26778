"""A fake OpenAI-compatible server on loopback that fails the way real gateways do.

Reached as ``openai-api/fake/<model>`` with ``FAKE_BASE_URL`` and ``FAKE_API_KEY``
(inspect_ai reads both). :attr:`FakeOpenAI.mode` picks the reply to every
request: ``ok`` (a chat completion with usage), ``no-usage`` (the same without
usage), ``500`` (a JSON error body), ``502-html`` (an nginx-style HTML page),
``html`` (status 200 with an HTML login page), ``drop`` (the connection closed
without a reply).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

CRASH = "the upstream model crashed"
GATEWAY = "502 Bad Gateway (nginx)"
LOGIN = "Gateway login required"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        mode = self.server.fake.mode
        self.server.fake.requests += 1
        if mode == "drop":
            self.close_connection = True
            self.connection.close()
            return
        if mode == "500":
            self._send(500, json.dumps({"error": {"message": CRASH, "type": "server_error"}}),
                       "application/json")
        elif mode == "502-html":
            self._send(502, f"<html><body><h1>{GATEWAY}</h1></body></html>", "text/html")
        elif mode == "html":
            self._send(200, f"<html><body>{LOGIN}</body></html>", "text/html")
        else:
            reply: dict[str, object] = {
                "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "hello"}}],
            }
            if mode == "ok":
                reply["usage"] = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
            self._send(200, json.dumps(reply), "application/json")

    def _send(self, status: int, text: str, content_type: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI


class FakeOpenAI:
    """The server, running on a thread until :meth:`close`."""

    MODES: ClassVar[tuple[str, ...]] = ("ok", "no-usage", "500", "502-html", "html", "drop")

    def __init__(self, handler: type[BaseHTTPRequestHandler] = _Handler) -> None:
        self.mode = "ok"
        self.requests = 0
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        """The URL to put in ``FAKE_BASE_URL``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
