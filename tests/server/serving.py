"""Helpers for the server tests: a free port, and ``memdir serve`` over HTTP in a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TIMEOUT = 120
BOMB_LINE = "a" * 40 + "!\n"
BOMB = "(?:a+?)+?b"
"""A pattern the regex engine cannot shortcut on ``BOMB_LINE``: exponential backtracking."""


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.bind((host.strip("[]"), 0))
        return int(sock.getsockname()[1])


def plant_bomb(store_dir: Path) -> None:
    (store_dir / "bomb.md").write_text(f"---\nname: bomb\ndescription: d\n---\n{BOMB_LINE}")


def wait_for_port(proc: subprocess.Popen[str], host: str, port: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early: {proc.communicate()[1]}")
        try:
            with socket.create_connection((host.strip("[]"), port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("server did not start listening in time")


def serve_command(store_dir: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "memdir", "serve", str(store_dir), *flags]


@contextmanager
def http_serve(
    store_dir: Path, *flags: str, host: str = "127.0.0.1", env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``memdir serve STORE --transport http --host HOST --port P FLAGS`` until the block ends."""
    port = free_port(host)
    proc = subprocess.Popen(
        serve_command(store_dir, "--transport", "http", "--host", host, "--port", str(port),
                      *flags),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        wait_for_port(proc, host, port)
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        proc.communicate()
