"""Ctrl-C during a long command exits 130 with a line saying how to resume."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from interrupting import default_sigint


def _silent_server() -> tuple[socket.socket, threading.Event]:
    """A loopback 'provider' that accepts requests and never answers them."""
    server = socket.create_server(("127.0.0.1", 0))
    asked = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            asked.set()

    threading.Thread(target=accept, daemon=True).start()
    return server, asked


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_during_ingest_exits_130_and_names_the_resume_command(tmp_path: Path) -> None:
    server, asked = _silent_server()
    port = server.getsockname()[1]
    talk = tmp_path / "talk.json"
    talk.write_text(json.dumps({"speakers": ["Ana"], "sessions": [
        {"id": 1, "date": "2024-01-01", "turns": [{"speaker": "Ana", "text": "I weave."}]}]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env |= {"HANG_API_KEY": "test", "HANG_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ingest", str(tmp_path / "s"), str(talk),
         "--model", "openai-api/hang/m"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint)
    try:
        assert asked.wait(60), "the model was never called"
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        server.close()
    assert proc.returncode == 130, err
    assert "error: interrupted: the chunk in progress was undone; 0 of 1 chunk(s)" in err
    assert "--skip 0`" in err and "memdir ingest" in err
