"""Remotes for replica tests: bare repositories, by path or behind ``git daemon`` on loopback."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from memdir.store import Store
from memdir.store.replica import Replica

ALICE = "---\nname: alice\ndescription: Alice, a friend\n---\n# Alice\n\nphone: 1\nmail: a@x\n"


def git(*args: str, cwd: Path | None = None, input: str | None = None) -> str:
    """Run a plain git command with no user configuration; its standard output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t"})
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          input=input, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _bench_replicas() -> ModuleType:
    """benchmarks/replicas.py, loaded under a name of its own (not this package's)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "replicas.py"
    spec = importlib.util.spec_from_file_location("memdir_bench_replicas", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while made
    spec.loader.exec_module(module)
    return module


GitDaemon = _bench_replicas().Daemon
"""``git daemon`` on 127.0.0.1 with pushes allowed: the simulation's own, so both agree."""


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
