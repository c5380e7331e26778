"""A sync conflict is seen by agents (listing, tool results) and people (tree, health, browse),
every tool set reads the file, and one ordinary tool call resolves it for every replica."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from memdir.metrics import health_report
from memdir.store import find_blocks, lint_store
from memdir.store.replica import Replica
from memdir.tools import make_toolset
from memdir.tools.anthropic import anthropic_set

from .conftest import ALICE, make_replica

PATH = "/memories/people/alice.md"


@pytest.fixture
def conflicted(tmp_path: Path, remote: Path) -> tuple[Replica, Replica]:
    """Two replicas whose last syncs left alice.md with a conflict block on both."""
    a = make_replica(tmp_path, "laptop", str(remote))
    a.store.create(PATH, ALICE)
    a.store.create("/memories/other.md", "---\nname: other\ndescription: Other\n---\nx\n")
    a.sync()
    b, _ = Replica.clone(str(remote), tmp_path / "server", name="server")
    a.store.edit(PATH, lambda t: t.replace("phone: 1", "phone: 2"))
    b.store.edit(PATH, lambda t: t.replace("phone: 1", "phone: 3"))
    a.sync()
    assert b.sync().conflicts == [PATH]
    assert a.sync().received == 2  # b's snapshot and b's merge commit
    return a, b


async def test_agents_see_the_conflict_and_resolve_it_with_one_call(
        conflicted: tuple[Replica, Replica]) -> None:
    a, b = conflicted
    tools = make_toolset("write", a.store)
    listing = (await tools.call("view", {"path": "/memories"})).content
    line = next(ln for ln in listing.splitlines() if "alice.md" in ln)
    assert "SYNC CONFLICT" in line and "Alice, a friend" in line
    assert "SYNC CONFLICT" not in next(ln for ln in listing.splitlines() if "other.md" in ln)

    shown = (await tools.call("view", {"path": PATH})).content
    assert "holds 1 unresolved conflict block" in shown and "str_replace" in shown
    text = a.store.read(PATH)
    (block,) = find_blocks(text)
    old = "\n".join(text.split("\n")[block.first - 1 : block.last])
    done = await tools.call("str_replace", {"path": PATH, "old_str": old,
                                            "new_str": "phone: 3 (since May; was 2)"})
    assert not done.is_error and "is resolved" in done.content
    listing = (await tools.call("view", {"path": "/memories"})).content
    assert "SYNC CONFLICT" not in listing
    assert a.sync().sent == 1
    b.sync()
    assert b.store.read(PATH) == a.store.read(PATH)
    assert "SYNC CONFLICT" not in (await make_toolset("read", b.store).call(
        "view", {"path": "/memories"})).content


async def test_every_tool_set_reads_the_conflicted_file(conflicted: tuple[Replica, Replica],
                                                        ) -> None:
    a, _ = conflicted
    assert lint_store(a.store) == []
    read = make_toolset("read", a.store)
    for name, args in (("grep", {"pattern": "phone: 3"}), ("toc", {"path": PATH}),
                       ("section_read", {"path": PATH, "heading_path": ["Alice"]})):
        result = await read.call(name, args)
        assert not result.is_error, (name, result.content)
    assert "phone: 3" in (await read.call("grep", {"pattern": "phone"})).content
    ranked = await make_toolset("bm25", a.store).call("search", {"query": "phone"})
    assert not ranked.is_error and "alice.md" in ranked.content
    chunk = await make_toolset("chunk", a.store).call("bm25_chunk_retrieve",
                                                       {"query": "phone"})
    assert not chunk.is_error and "phone: 2" in chunk.content
    claude = await anthropic_set(a.store).call("view", {"path": PATH})
    assert "phone: 3" in claude.content and "unresolved conflict block" in claude.content
    from memdir.tools._sandbox import available_backends

    if available_backends():
        bash = await make_toolset("shell-read", a.store).call(
            "bash", {"command": "cat /memories/people/alice.md"})
        assert "phone: 2" in bash.content and "phone: 3" in bash.content


def test_people_see_it_in_tree_and_health(conflicted: tuple[Replica, Replica]) -> None:
    a, _ = conflicted
    report = health_report(a.store)
    assert any(f"unresolved sync conflict in {PATH}" in alarm for alarm in report.alarms)
    counts = report.alarm_counts()
    assert counts["sync conflict"] == 1
    assert sum(counts.values()) == len(report.alarms)
    run = [sys.executable, "-m", "memdir"]
    tree = subprocess.run([*run, "tree", str(a.root)], capture_output=True, text=True,
                          check=True).stdout
    assert "alice.md" in tree and "SYNC CONFLICT" in tree
    health = subprocess.run([*run, "health", str(a.root), "--json"], capture_output=True,
                            text=True, check=False)
    assert health.returncode == 1
    data = json.loads(health.stdout)
    assert any("sync conflict" in alarm for alarm in data["alarms"])
    assert data["alarm_counts"]["sync conflict"] == 1
    assert data["sync_conflicts"] == [a for a in data["alarms"] if "sync conflict" in a]
    text = subprocess.run([*run, "health", str(a.root)], capture_output=True, text=True,
                          check=False).stdout
    heading = next(line for line in text.splitlines() if line.startswith("Alarms ("))
    assert f"Alarms ({len(data['alarms'])}: 1 sync conflict, " in heading


@pytest.fixture
def browsed(conflicted: tuple[Replica, Replica]) -> Iterator[tuple[str, str]]:
    from memdir.browse import browse_app, open_target

    a, _ = conflicted
    config = uvicorn.Config(browse_app(open_target(a.root), token="t0ken"), host="127.0.0.1",
                            port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", "t0ken"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_browse_shows_both_sides(browsed: tuple[str, str]) -> None:
    base, token = browsed
    headers = {"Authorization": f"Bearer {token}"}
    page = httpx.get(f"{base}/s/store/file/people/alice.md", headers=headers, timeout=60)
    assert page.status_code == 200, page.text
    html = page.text
    assert "sync conflict: 1 block keeps two versions" in html
    assert html.count('class="side"') == 2
    assert "replica laptop" in html and "replica server" in html
    assert "phone: 2" in html and "phone: 3" in html
    tree = httpx.get(f"{base}/s/store/", headers=headers, timeout=60).text
    assert "alice.md" in tree
