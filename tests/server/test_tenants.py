"""One server, many stores: a token reaches its own store only, and limits are enforced.

Served for real (uvicorn on loopback, the MCP SDK's streamable-HTTP client), with an
attacker tenant for every tool set calling every one of its tools at another tenant's
store every way a path can be bent, and the protocol itself probed (no token, bad
tokens, doubled headers, another tenant's session id).
"""

from __future__ import annotations

import hashlib
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memdir.server import (
    TENANT_TOOLSETS,
    TenantIndex,
    TenantsError,
    add_tenant,
    load_tenants,
    tenants_app,
)
from memdir.tools._sandbox import available_backends

CANARY = "CANARY-" + secrets.token_hex(8)
SECRET = f"---\nname: secret\ndescription: the victim's secret\n---\n# Secret\n\n{CANARY}\n"
OWN = "---\nname: own\ndescription: the attacker's own file\n---\n# Own\n\nmine\n"
TIMEOUT = 120


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and ".memdir" not in p.parts}


class Site:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.stores = root / "stores"
        self.stores.mkdir()
        self.file = root / "tenants.yaml"
        self.tokens: dict[str, str] = {}
        self.url = ""
        self.app: Any = None

    def add(self, name: str, **options: Any) -> str:
        options.setdefault("store", name)
        options.setdefault("toolset", "write")
        options.setdefault("access", "write")
        self.tokens[name] = add_tenant(self.file, name, **options)
        return self.tokens[name]

    @asynccontextmanager
    async def client(self, name: str | None, *, token: str | None = None
                     ) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token or self.tokens[name or '']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(self.url, http_client=http)
            async with Client(transport, read_timeout_seconds=TIMEOUT) as client:
                yield client


@pytest.fixture
def site(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Site]:
    """Every tenant served by one real server; ``indirect`` params set the tenant cache."""
    cache: dict[str, Any] = getattr(request, "param", {})
    made = Site(tmp_path)
    made.add("victim")
    for toolset in TENANT_TOOLSETS:
        if toolset.startswith("shell") and not available_backends():
            continue
        made.add(f"attacker-{toolset}", toolset=toolset, calls_per_second=1000)
    made.add("victim-reader", store="victim", toolset="write", access="read")
    made.add("small", max_files=2, max_bytes=400, calls_per_second=1000)
    made.add("slow", calls_per_second=1)
    if available_backends():
        made.add("small-shell", toolset="shell", max_files=3, max_bytes=2000,
                 calls_per_second=1000)
    (made.stores / "victim").mkdir()
    (made.stores / "victim" / "secret.md").write_text(SECRET)
    for name in made.tokens:
        if name.startswith("attacker"):
            (made.stores / name).mkdir()
            (made.stores / name / "own.md").write_text(OWN)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    # Through the index a server keeps of the file, as `memdir serve --tenants` reads it.
    app = tenants_app(TenantIndex(made.file), made.stores, host="127.0.0.1", port=port,
                      **cache)
    made.app = app
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.05)
    made.url = f"http://127.0.0.1:{port}/mcp"
    try:
        yield made
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _bent_paths(site: Site) -> list[str]:
    host = site.stores / "victim"
    return [
        "/memories/../victim/secret.md", "/memories/../../stores/victim/secret.md",
        str(host / "secret.md"), "/memories/../victim", str(host), "../victim/secret.md",
        "/memories/%2e%2e/victim/secret.md", "/memories/./../victim/secret.md",
        f"file://{host}/secret.md", "/memories/..\\victim\\secret.md",
        "/memories/\u2025/victim/secret.md", "/memories/victim/secret.md",
        "/memories/secret.md", "/victim/secret.md", "~/../victim/secret.md",
    ]


def _attacks(tool: str, paths: list[str]) -> list[dict[str, Any]]:
    header = "---\nname: pwn\ndescription: d\n---\nx\n"
    per_path = {
        "view": lambda p: [{"path": p}, {"path": p, "view_range": [1, -1]}],
        "grep": lambda p: [{"pattern": "CANARY", "path": p}],
        "toc": lambda p: [{"path": p}],
        "section_read": lambda p: [{"path": p, "heading_path": ["Secret"]}],
        "create": lambda p: [{"path": p, "file_text": header},
                             {"path": p.rsplit("/", 1)[0] + "/pwn.md", "file_text": header}],
        "str_replace": lambda p: [{"path": p, "old_str": "CANARY", "new_str": "x"}],
        "insert": lambda p: [{"path": p, "insert_line": 0, "insert_text": "x"}],
        "delete": lambda p: [{"path": p}],
        "rename": lambda p: [{"old_path": p, "new_path": "/memories/stolen.md"},
                             {"old_path": "/memories/own.md", "new_path": p}],
    }
    if tool in per_path:
        return [args for p in paths for args in per_path[tool](p)] + (
            [{"pattern": "CANARY"}] if tool == "grep" else [])
    if tool == "search":
        return [{"query": "CANARY secret victim"}, {"query": "canary"}]
    if tool == "bm25_chunk_retrieve":
        return [{"query": "CANARY secret victim"}]
    if tool == "bash":
        victim = site_victim_host
        return [{"command": c} for c in (
            "cat ../victim/secret.md /memories/../victim/secret.md; ls -la / /memories/..",
            f"cat {victim}/secret.md; ls {victim}",
            "grep -rs CANARY / 2>/dev/null | head; find / -name secret.md 2>/dev/null | head",
            "ln -s ../victim /memories/link; cat /memories/link/secret.md; ls /memories/link",
            f"ln -s {victim} /memories/hostlink; echo x > ../victim/pwn.md; "
            f"echo x > {victim}/pwn.md",
        )]
    raise AssertionError(f"no attack written for tool {tool}")


site_victim_host = ""


async def test_no_tool_of_any_set_reaches_another_tenants_store(site: Site) -> None:
    global site_victim_host
    site_victim_host = str(site.stores / "victim")
    calls = 0
    with anyio.fail_after(900):
        for name in [n for n in site.tokens if n.startswith("attacker")]:
            before = {p.name: _digest(p) for p in site.stores.iterdir()}
            async with site.client(name) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                assert tools, name
                for tool in tools:
                    for args in _attacks(tool, _bent_paths(site)):
                        result = await client.call_tool(tool, args)
                        text = "".join(b.text for b in result.content
                                       if isinstance(b, types.TextContent))
                        assert CANARY not in text, (name, tool, args, text)
                        calls += 1
            after = {p.name: _digest(p) for p in site.stores.iterdir()}
            assert set(after) == set(before), name  # nothing made beside the stores
            changed = [store for store in after if after[store] != before[store]]
            assert changed in ([], [name]), (name, changed)  # only its own store, if any
    assert calls > 300
    assert (site.stores / "victim" / "secret.md").read_text() == SECRET


async def test_a_token_opens_its_own_store_and_read_access_cannot_write(site: Site) -> None:
    with anyio.fail_after(TIMEOUT):
        async with site.client("victim") as client:
            shown = await client.call_tool("view", {"path": "/memories/secret.md"})
            assert CANARY in shown.content[0].text  # type: ignore[union-attr]
        async with site.client("victim-reader") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"view", "grep"}
            assert CANARY in (await client.call_tool(
                "grep", {"pattern": "CANARY"})).content[0].text  # type: ignore[union-attr]
            with pytest.raises(Exception, match="create"):
                await client.call_tool("create", {"path": "/memories/x.md", "file_text": OWN})
    assert not (site.stores / "victim" / "x.md").exists()


async def test_the_protocol_refuses_every_token_but_the_right_one(site: Site) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    right = site.tokens["victim"]
    wrong = [None, "nope", right.upper(), right[:-1], right + "x", " " + right,
             hashlib.sha256(right.encode()).hexdigest(), f"Basic {right}"]
    async with httpx2.AsyncClient(timeout=30) as http:
        for token in wrong:
            headers = dict(accept)
            if token is not None:
                headers["Authorization"] = token if token.startswith("Basic") else \
                    f"Bearer {token}"
            refused = await http.post(site.url, json=init, headers=headers)
            assert refused.status_code == 403, token
            assert CANARY not in refused.text and "victim" not in refused.text
        doubled = await http.post(site.url, json=init, headers=[
            ("Authorization", f"Bearer {site.tokens['attacker-write']}"),
            ("Authorization", f"Bearer {right}"), *accept.items()])
        assert doubled.status_code == 403
        known = site.url.replace("/mcp", "/.well-known/oauth-authorization-server")
        assert (await http.get(known)).status_code == 404
        opened = await http.post(site.url, json=init, headers={
            "Authorization": f"Bearer {right}", **accept})
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        stolen = await http.post(site.url, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "view", "arguments": {"path": "/memories/secret.md"}}},
            headers={"Authorization": f"Bearer {site.tokens['attacker-write']}",
                     "mcp-session-id": session, **accept})
        assert stolen.status_code in (400, 404) and CANARY not in stolen.text


async def test_limits_are_enforced_with_clear_errors(site: Site) -> None:
    header = "---\nname: {n}\ndescription: d\n---\n"
    with anyio.fail_after(TIMEOUT):
        async with site.client("small") as client:
            for n in ("a", "b"):
                made = await client.call_tool("create", {"path": f"/memories/{n}.md",
                                                         "file_text": header.format(n=n)})
                assert not made.is_error
            third = await client.call_tool("create", {"path": "/memories/c.md",
                                                      "file_text": header.format(n="c")})
            assert third.is_error
            assert "holds 2 of the 2 files" in third.content[0].text  # type: ignore[union-attr]
            big = await client.call_tool("insert", {"path": "/memories/a.md", "insert_line": 4,
                                                    "insert_text": "x" * 500})
            assert big.is_error
            assert "bytes tenant small may keep" in big.content[0].text  # type: ignore[union-attr]
        async with site.client("slow") as client:
            results = [await client.call_tool("view", {"path": "/memories"}) for _ in range(6)]
            refused = [r for r in results if r.is_error]
            assert refused and len(refused) < 6
            assert "calls per second" in refused[0].content[0].text  # type: ignore[union-attr]
    assert sorted(p.name for p in (site.stores / "small").iterdir() if p.suffix) == [
        "a.md", "b.md"]


@pytest.mark.skipif(not available_backends(), reason="no confined shell here")
async def test_a_shell_command_cannot_write_past_the_tenants_limits(site: Site) -> None:
    """Each command a tenant with small limits could use to pass them, tried for real."""
    (site.stores / "small-shell").mkdir(exist_ok=True)
    (site.stores / "small-shell" / "own.md").write_text(OWN)
    note = "printf -- '---\\nname: f%s\\ndescription: d\\n---\\nx\\n' {n} > f{n}.md"
    attacks = {
        "many files": "; ".join(note.format(n=n) for n in range(20)),
        "one big file": "head -c 100000 /dev/zero | tr '\\0' x >> own.md",
        "a huge file fast": "head -c 300000000 /dev/zero > huge.md; echo wrote",
        "grow in place": "yes 'more more more' | head -c 5000 >> own.md",
        "delete, then flood": "rm own.md; for i in $(seq 1 50); do echo x > n$i.md; done",
        "keep writing": "i=0; while true; do i=$((i+1)); echo xxxxxxxxxxxxxxxx > w$i.md; done",
        "hidden files": "for i in 1 2 3 4 5; do head -c 600 /dev/zero > .h$i; done",
        "a folder tree": "mkdir -p a/b/c && for i in 1 2 3 4; do echo x > a/b/c/$i.md; done",
    }
    before = _digest(site.stores / "small-shell")
    with anyio.fail_after(TIMEOUT * 2):
        async with site.client("small-shell") as client:
            for what, command in attacks.items():
                result = await client.call_tool("bash", {"command": command})
                text = "".join(b.text for b in result.content
                               if isinstance(b, types.TextContent))
                assert result.is_error, (what, text)
                assert "[undone:" in text and "tenant small-shell may keep" in text, (what, text)
                assert _digest(site.stores / "small-shell") == before, what
            # Within the limits, a command works as before and what it wrote stays.
            kept = await client.call_tool("bash", {"command": note.format(n=1)})
            assert not kept.is_error, kept.content
    assert set(_digest(site.stores / "small-shell")) == {"own.md", "f1.md"}
    assert (site.stores / "small-shell" / "own.md").read_text() == OWN


def test_start_up_builds_no_tenant_whatever_their_number(tmp_path: Path) -> None:
    file, stores = tmp_path / "tenants.yaml", tmp_path / "stores"
    stores.mkdir()
    text = "tenants:\n" + "".join(
        f"  t{n}:\n    token_sha256: {hashlib.sha256(str(n).encode()).hexdigest()}\n"
        f"    store: t{n}\n    toolset: write\n    access: write\n" for n in range(2000))
    file.write_text(text)
    app = tenants_app(load_tenants(file), stores, host="127.0.0.1", port=1)
    assert app.live == [] and app.built == 0  # type: ignore[attr-defined]
    assert list(stores.iterdir()) == []  # not even a store folder until a first request


@pytest.mark.parametrize("site", [{"max_live": 2, "idle_seconds": 1.0}], indirect=True)
async def test_tenants_are_built_on_first_use_kept_within_bounds_and_closed_when_idle(
        site: Site) -> None:
    app = site.app
    assert app.live == [] and app.built == 0
    with anyio.fail_after(TIMEOUT):
        async with site.client("victim") as client:
            assert CANARY in (await client.call_tool(
                "view", {"path": "/memories/secret.md"})).content[0].text  # type: ignore[union-attr]
        assert app.live == ["victim"]
        for name in ("attacker-write", "victim-reader", "attacker-read"):
            async with site.client(name) as client:
                shown = await client.call_tool("view", {"path": "/memories"})
                assert CANARY not in shown.content[0].text  # type: ignore[union-attr]
                assert len(app.live) <= 2 and app.live[-1] == name
        assert app.live == ["victim-reader", "attacker-read"] and app.built == 4
        # The victim, closed to make room, is built afresh and still holds its own store.
        async with site.client("victim") as client:
            assert CANARY in (await client.call_tool(
                "view", {"path": "/memories/secret.md"})).content[0].text  # type: ignore[union-attr]
        assert app.built == 5
        deadline = time.monotonic() + 30
        while app.live:  # nobody asks for a while: every tenant is closed
            assert time.monotonic() < deadline, app.live
            await anyio.sleep(0.2)


@pytest.mark.parametrize("site", [{"max_live": 1}], indirect=True)
async def test_a_session_outlives_no_close_and_never_crosses_tenants(site: Site) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    victim = {"Authorization": f"Bearer {site.tokens['victim']}", **accept}
    attacker = {"Authorization": f"Bearer {site.tokens['attacker-write']}", **accept}
    view = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "view", "arguments": {"path": "/memories/secret.md"}}}
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(site.url, json=init, headers=victim)
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        # The attacker's first request closes the victim (one tenant at a time) and opens
        # the attacker: the victim's session id means nothing to it, nor after.
        for _ in range(2):
            stolen = await http.post(site.url, json=view,
                                     headers={**attacker, "mcp-session-id": session})
            assert stolen.status_code in (400, 404) and CANARY not in stolen.text
            assert site.app.live == ["attacker-write"]
        # The victim's old session ended with its close: refused, so its client starts anew.
        old = await http.post(site.url, json=view, headers={**victim, "mcp-session-id": session})
        assert old.status_code in (400, 404) and CANARY not in old.text
    assert (site.stores / "victim" / "secret.md").read_text() == SECRET


async def test_memdir_serve_tenants_from_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    run = [sys.executable, "-m", "memdir"]
    file = tmp_path / "tenants.yaml"
    stores = tmp_path / "stores"
    stores.mkdir()
    tokens = {}
    for name, access in (("ann", "write"), ("ben", "read")):
        made = subprocess.run([*run, "tenants", "add", str(file), name, "--access", access],
                              capture_output=True, text=True, check=True)
        tokens[name] = made.stdout.strip()
    assert tokens["ann"] not in file.read_text()  # only the hash is kept
    listed = subprocess.run([*run, "tenants", "list", str(file)], capture_output=True,
                            text=True, check=True).stdout
    assert "ann: store ann, write set, write access" in listed
    mixed = subprocess.run([*run, "serve", str(stores), "--tenants", str(file), "--transport",
                            "http", "--token", "x"], capture_output=True, text=True, check=False)
    assert mixed.returncode == 2 and "--tenants serves over http" in mixed.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    proc = subprocess.Popen([*run, "serve", str(stores), "--tenants", str(file), "--transport",
                             "http", "--port", str(port)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and proc.poll() is None
            await anyio.sleep(0.2)
        site = Site.__new__(Site)
        site.url, site.tokens = f"http://127.0.0.1:{port}/mcp", tokens
        with anyio.fail_after(TIMEOUT):
            async with site.client("ann") as client:
                made = await client.call_tool("create", {"path": "/memories/a.md",
                                                         "file_text": OWN.replace("own", "a")})
                assert not made.is_error
            async with site.client("ben") as client:
                listing = await client.call_tool("view", {"path": "/memories"})
                assert "a.md" not in listing.content[0].text  # type: ignore[union-attr]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert (stores / "ann" / "a.md").is_file() and not (stores / "ben" / "a.md").exists()


@pytest.mark.parametrize("content", [b"tenants: [unclosed", b"tenants: \xff\xfe",
                                     b"- a list\n- not a mapping\n"])
def test_a_malformed_tenants_file_is_a_clear_error_and_is_left_alone(tmp_path: Path,
                                                                    content: bytes) -> None:
    file = tmp_path / "tenants.yaml"
    file.write_bytes(content)
    with pytest.raises(TenantsError, match="tenants.yaml"):
        load_tenants(file)
    with pytest.raises(TenantsError, match="tenants.yaml"):
        add_tenant(file, "alice", store="alice", toolset="write", access="write")
    assert file.read_bytes() == content


async def test_serve_tenants_sync_opens_no_store_at_start_and_pushes_a_tenants_writes(
        tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from memdir.store import Store
    from memdir.store.replica import Replica

    run = [sys.executable, "-m", "memdir"]
    file, stores, remote = tmp_path / "tenants.yaml", tmp_path / "stores", tmp_path / "r.git"
    stores.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    Replica(Store(stores / "ann", create=True), name="server").attach(str(remote))
    token = add_tenant(file, "ann", store="ann", toolset="write", access="write")
    for n in range(50):  # tenants never asked for: no store of theirs is opened
        add_tenant(file, f"idle-{n}", store=f"idle-{n}", toolset="read", access="read")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    proc = subprocess.Popen([*run, "serve", str(stores), "--tenants", str(file), "--transport",
                             "http", "--port", str(port), "--sync"], stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and proc.poll() is None
            await anyio.sleep(0.2)
        assert sorted(p.name for p in stores.iterdir()) == ["ann"]  # nothing made at start
        site = Site.__new__(Site)
        site.url, site.tokens = f"http://127.0.0.1:{port}/mcp", {"ann": token}
        with anyio.fail_after(TIMEOUT):
            async with site.client("ann") as client:
                made = await client.call_tool("create", {"path": "/memories/a.md",
                                                         "file_text": OWN.replace("own", "a")})
                assert not made.is_error
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    shown = subprocess.run(["git", "log", "--format=%an", "main"], cwd=remote, env=env,
                           capture_output=True, text=True, check=False).stdout
    assert "token ann" in shown, err  # the last sync, at exit, pushed the tenant's write
