"""Remotes for replica tests: bare repositories, by path or behind ``git daemon`` on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store.replica import Replica

ALICE = "---\nname: alice\ndescription: Alice, a friend\n---\n# Alice\n\nphone: 1\nmail: a@x\n"


def git(*args: str, cwd: Path | None = None) -> str:
    """Run a plain git command with no user configuration; its standard output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t"})
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class GitDaemon:
    """``git daemon`` serving one folder of bare repositories on 127.0.0.1, pushes allowed."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
             "--listen=127.0.0.1", f"--port={self.port}", f"--base-path={self.base}",
             str(self.base)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("git daemon did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """An empty bare repository on disk."""
    path = tmp_path / "team.git"
    git("init", "-q", "--bare", "-b", "main", str(path))
    return path


@pytest.fixture
def daemon(tmp_path: Path, remote: Path) -> Iterator[GitDaemon]:
    """``git daemon`` serving ``remote`` as ``git://127.0.0.1:PORT/team.git``; stopped after."""
    served = GitDaemon(remote.parent)
    served.start()
    try:
        yield served
    finally:
        served.stop()


def make_replica(tmp_path: Path, name: str, url: str) -> Replica:
    """A new store called ``name`` whose remote is ``url``."""
    replica = Replica(Store(tmp_path / name, create=True), name=name, timeout=20)
    replica.attach(url)
    return replica


def store_files(root: Path) -> dict[str, bytes]:
    """Every file of a store but its ``.git`` and ``.memdir``: relative path -> bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".memdir") or not path.is_file():
            continue
        found[rel.as_posix()] = path.read_bytes()
    return found
