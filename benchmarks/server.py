"""Hardening probes of ``memdir serve`` and the tools, as attempts and failures per area.

Each probe starts the server (or the command line) of a memdir checkout as a real
process and attacks it from outside with the ``mcp`` package's own client, so the
same probes run against any version: ``--tree`` names the checkout (its ``.venv``
runs the server), by default this one. Run it on the baseline and on the branch
to get the before/after table:

    uv run python benchmarks/server.py --tree /path/to/baseline --label before
    uv run python benchmarks/server.py --label after

Areas (a failure is the attack succeeding, or the server not answering in time):

- regex: a grep of ``(\\w+\\s?)*$`` over the sample store, and of an engine bomb
  (``(?:a+?)+?b`` on a line of 40 a's), each must answer within 15 s;
- other session: while one session runs the engine bomb, another session's
  ``view`` must be answered within 200 ms (its latency with no bomb running is
  the baseline, reported beside it);
- rebinding: requests to a server on 127.0.0.2 with a foreign Host and Origin
  must not run a delete;
- sigterm: SIGTERM during a bomb must stop the server within 5 s;
- ctrl-c: SIGINT to ``memdir serve`` over stdio with stdin a pipe must stop it
  within 5 s;
- caps: results of huge inputs (chunk retrieval over a 104 MB file, toc of 70,000
  headings, a section miss in that file, str_replace and grep echoing a 1 MB
  input) must stay under 200,000 characters.

Results go to ``benchmarks/results/server-LABEL.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

RESULTS = Path(__file__).resolve().parent / "results"
HERE_TREE = Path(__file__).resolve().parents[1]
BOMB = "(?:a+?)+?b"
ISSUE_BOMB = r"(\w+\s?)*$"
FRONT = "---\nname: {}\ndescription: d\n---\n"


class Probe:
    """Counts attempts and failures per area, with notes on each failure."""

    def __init__(self) -> None:
        self.areas: dict[str, dict[str, Any]] = {}

    def record(self, area: str, failed: bool, note: str = "") -> None:
        entry = self.areas.setdefault(area, {"attempts": 0, "failures": 0, "notes": []})
        entry["attempts"] += 1
        entry["failures"] += int(failed)
        if note:
            entry["notes"].append(note)


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _memdir(tree: Path) -> str:
    return str(tree / ".venv" / "bin" / "memdir")


def _make_store(tree: Path, where: Path) -> Path:
    store = where / "store"
    subprocess.run([_memdir(tree), "init", str(store), "--sample"], check=True,
                   capture_output=True)
    (store / "bomb.md").write_text(FRONT.format("bomb") + "a" * 40 + "!\n")
    return store


class Server:
    """``memdir serve STORE --transport http`` of a checkout, as a process."""

    def __init__(self, tree: Path, store: Path, *flags: str, host: str = "127.0.0.1",
                 env: dict[str, str] | None = None) -> None:
        self.host, self.port = host, _free_port(host)
        self.proc = subprocess.Popen(
            [_memdir(tree), "serve", str(store), "--transport", "http", "--host", host,
             "--port", str(self.port), *flags],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.communicate()[1]}")
            try:
                socket.create_connection((host, self.port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not listen") from None
                time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    return block.text if isinstance(block, types.TextContent) else ""


class Failed:
    """A session that could not even start or finish (the server did not answer)."""

    def __init__(self, why: str) -> None:
        self.why = why


async def _session(url: str, body: Callable[[Client], Awaitable[Any]], limit: float = 30
                   ) -> Any:
    async def run() -> Any:
        async with httpx2.AsyncClient(timeout=limit) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await body(client)

    try:
        return await asyncio.wait_for(run(), limit)
    except (Exception, BaseExceptionGroup) as exc:  # counted as a failure by the caller
        return Failed(f"session failed: {type(exc).__name__}")


async def _timed_call(client: Client, name: str, args: dict[str, Any], limit: float
                      ) -> tuple[float | None, str]:
    start = time.monotonic()
    try:
        result = await asyncio.wait_for(client.call_tool(name, args), limit)
    except TimeoutError:
        return None, ""
    return time.monotonic() - start, _text(result)


async def probe_regex(probe: Probe, tree: Path, store: Path, reps: int) -> None:
    server = Server(tree, store)
    try:
        for pattern in [ISSUE_BOMB, BOMB] * reps:
            async def run(client: Client, pattern: str = pattern) -> tuple[float | None, str]:
                return await _timed_call(client, "grep", {"pattern": pattern}, 15)
            outcome = await _session(server.url, run)
            took = None if isinstance(outcome, Failed) else outcome[0]
            probe.record("regex", took is None,
                         f"{pattern}: {'no answer in 15 s' if took is None else f'{took:.2f} s'}")
    finally:
        server.stop()


async def probe_other_session(probe: Probe, tree: Path, store: Path, reps: int) -> None:
    server = Server(tree, store, env={"MEMDIR_TOOL_TIME_LIMIT": "60"})
    try:
        async def idle(client: Client) -> list[float]:
            times = []
            for _ in range(reps):
                took, _ = await _timed_call(client, "view", {"path": "/memories/people"}, 30)
                times.append(took or 30.0)
            return times

        quiet = await _session(server.url, idle, limit=120)

        async def bomb(client: Client) -> None:
            await _timed_call(client, "grep", {"pattern": BOMB}, 8)

        for _ in range(reps):
            bomber = asyncio.create_task(_session(server.url, bomb))
            await asyncio.sleep(1.0)

            async def other(client: Client) -> float | None:
                took, _ = await _timed_call(client, "view", {"path": "/memories/people"}, 10)
                return took

            took = await _session(server.url, other, limit=10)
            if isinstance(took, Failed):
                took = None
            probe.record("other session", took is None or took > 0.2,
                         "no answer in 10 s" if took is None else f"{took * 1000:.0f} ms")
            bomber.cancel()
            await asyncio.gather(bomber, return_exceptions=True)
        probe.areas["other session"]["idle_ms_median"] = round(
            sorted(quiet)[len(quiet) // 2] * 1000, 1)
    finally:
        server.stop()


async def probe_rebinding(probe: Probe, tree: Path, store: Path, reps: int) -> None:
    server = Server(tree, store, "--write", host="127.0.0.2")
    accept = {"Accept": "application/json, text/event-stream",
              "Content-Type": "application/json"}
    foreign = {"Host": f"evil.example:{server.port}", "Origin": "http://evil.example"}
    try:
        for n in range(reps):
            victim = store / "people" / f"victim-{n}.md"
            victim.write_text(FRONT.format(f"victim-{n}") + "x\n")
            async with httpx2.AsyncClient(timeout=30) as http:
                init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "probe", "version": "0"}}}
                reply = await http.post(server.url, json=init, headers={**accept, **foreign})
                session = reply.headers.get("mcp-session-id")
                if reply.status_code == 200 and session:
                    headers = {**accept, **foreign, "mcp-session-id": session}
                    await http.post(server.url, headers=headers, json={
                        "jsonrpc": "2.0", "method": "notifications/initialized"})
                    await http.post(server.url, headers=headers, json={
                        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                            "name": "delete",
                            "arguments": {"path": f"/memories/people/victim-{n}.md"}}})
            probe.record("rebinding", not victim.exists(),
                         f"initialize with a foreign Host: HTTP {reply.status_code}")
    finally:
        server.stop()


async def probe_sigterm(probe: Probe, tree: Path, store: Path, reps: int) -> None:
    for _ in range(reps):
        server = Server(tree, store, env={"MEMDIR_TOOL_TIME_LIMIT": "60"})
        try:
            async def bomb(client: Client) -> None:
                await _timed_call(client, "grep", {"pattern": BOMB}, 1.0)

            await _session(server.url, bomb)
            server.proc.send_signal(signal.SIGTERM)
            start = time.monotonic()
            try:
                server.proc.wait(timeout=5)
                probe.record("sigterm", False, f"{time.monotonic() - start:.2f} s")
            except subprocess.TimeoutExpired:
                probe.record("sigterm", True, "still running 5 s after SIGTERM")
        finally:
            server.stop()


def probe_ctrl_c(probe: Probe, tree: Path, store: Path, reps: int) -> None:
    for _ in range(reps):
        proc = subprocess.Popen([_memdir(tree), "serve", str(store)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        proc.stdin.flush()
        proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        try:
            proc.wait(timeout=5)
            probe.record("ctrl-c", False, f"{time.monotonic() - start:.2f} s")
        except subprocess.TimeoutExpired:
            probe.record("ctrl-c", True, "still running 5 s after SIGINT (stdin a pipe)")
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def probe_caps(probe: Probe, tree: Path, where: Path) -> None:
    big = where / "big"
    subprocess.run([_memdir(tree), "init", str(big)], check=True, capture_output=True)
    words = " ".join(f"word{n % 997}" for n in range(2000))
    with (big / "huge.md").open("w") as out:  # about 104 MB
        out.write(FRONT.format("huge") + "pottery\n")
        for _ in range(9000):
            out.write(words + "\n")
    heads = big / "heads.md"
    heads.write_text(FRONT.format("heads") + "".join(f"## Heading {n}\n" for n in range(70_000)))
    (big / "small.md").write_text(FRONT.format("small") + "pottery class\n")
    huge_input = "never there " * 90_000
    calls = [
        ("chunk retrieval over a 104 MB file", "chunk", "bm25_chunk_retrieve",
         {"query": "pottery"}),
        ("toc of 70,000 headings", "read", "toc", {"path": "/memories/heads.md"}),
        ("section miss in 70,000 headings", "read", "section_read",
         {"path": "/memories/heads.md", "heading_path": ["## Nowhere"]}),
        ("str_replace echoing a 1 MB old_str", "write", "str_replace",
         {"path": "/memories/small.md", "old_str": huge_input, "new_str": "x"}),
        ("grep echoing a 1 MB pattern", "read", "grep", {"pattern": huge_input}),
    ]
    for what, toolset, name, args in calls:
        try:
            done = subprocess.run(
                [_memdir(tree), "tool", str(big), "--set", toolset, "-"],
                input=json.dumps({"name": name, "arguments": args}),
                capture_output=True, text=True, timeout=300, check=False,
            )
            shown = len(done.stdout)
            failed = shown > 200_000
            first = " ".join(done.stdout.split())[:90]
            note = f"{what}: {shown:,} characters (exit {done.returncode}: {first})"
        except subprocess.TimeoutExpired:
            failed, note = True, f"{what}: no answer in 300 s"
        probe.record("caps", failed, note)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, default=HERE_TREE)
    parser.add_argument("--label", default="after")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    probe = Probe()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        store = _make_store(args.tree, where)
        await probe_regex(probe, args.tree, store, args.reps)
        await probe_other_session(probe, args.tree, store, args.reps)
        await probe_rebinding(probe, args.tree, store, args.reps)
        await probe_sigterm(probe, args.tree, store, args.reps)
        probe_ctrl_c(probe, args.tree, store, args.reps)
        probe_caps(probe, args.tree, where)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"server-{args.label}.json"
    out.write_text(json.dumps({"tree": str(args.tree), "areas": probe.areas}, indent=2) + "\n")
    print(f"{'area':<16} {'attempts':>8} {'failures':>8}  notes")
    for area, entry in probe.areas.items():
        print(f"{area:<16} {entry['attempts']:>8} {entry['failures']:>8}  "
              + "; ".join(entry["notes"][:4]))
    print(f"written to {out}")


if __name__ == "__main__":
    asyncio.run(main())
