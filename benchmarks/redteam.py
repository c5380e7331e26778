"""Issue 19 end to end: both red teams' attacks on the baseline and the current code, one table.

One run attacks every ``--tree`` (by default ``before``, a worktree of 4e9ad55,
the code before issue 19's fixes, and ``after``, this checkout). Each attack is
a child process of its own whose ``PYTHONPATH`` puts one checkout's ``src/``
first, run by that checkout's own ``.venv`` Python, under the caps of
``benchmarks/hardening_store.py`` (a 2 GiB address space, a wall-clock cap), so
the old code's hangs and blow-ups end as measured kills instead of filling the
machine; fork bombs run inside a pids cgroup of this benchmark's own
(``pids.max`` 1,024). Browse servers keep the 2 GiB cap under ``prlimit`` where
Chromium, which reserves far more address space than it uses, runs beside them
uncapped but still under the wall clock. Other benchmarks' attacks are run, not
copied: ``hardening_store.py``'s store probes, ``race.py`` and ``fuzz.py`` (with
``--json``, on the tree's code) and ``server.py``'s regex probe.

Attacks (``--only`` names; sizes are smaller than the issue's where the effect
shows anyway):

- ``1``: the 62-byte header ``metadata: &m {self: *m}``: ``memdir lint``,
  ``memdir health``, three browse pages, and ``toc`` through ``memdir serve``
  over stdio (the server's RSS and CPU in the 5 s after the answer).
- ``2``: ``str_replace`` of ``a`` in a 512 KiB file of ``a`` lines (write set)
  and of an empty ``old_str`` (Anthropic profile), a second writer 0.2 s in.
- ``3``: a 510 KB file of 85,000 headings written with ``create``: ``memdir
  health`` and the browse tree, health and file pages.
- ``4``: ``:(){ :|:& };:`` through the shell tool: the most processes at once.
- ``5``: ``memdir browse`` with ``MEMDIR_MCP_TOKEN`` set: cookie and CSP; then
  real Chromium on a file whose image and link name another loopback port.
- ``6``: a tree 1,000 folders deep (``memdir tree``, ``health``, ``history
  verify``), browse at 400 and 600 levels, ``create`` 1,000 levels deep.
- ``7``: ``echo '*' > /memories/.gitignore`` and ``* text`` in
  ``.gitattributes`` through the shell, then a new (CRLF) file: recorded,
  ``verify``, restore.
- ``8``: issue 19's trailing-space sequence through the Anthropic profile.
- ``9``: 10 exotic calls through ``ToolSet.call``; 13 crafted
  ``.memdir/bm25-index.npz`` files (a 4 GB deflate bomb, headers of other
  shapes, cuts, flipped bytes), each searched by a new process; browse on a
  dangling and a looping link, a non-UTF-8 name and 100,000 headings;
  ``memdir grep`` into a closed pipe and to ASCII stdout.
- ``fuzz``: ``benchmarks/fuzz.py`` with 100 generated calls per tool set (a
  shell set 25) and per adapter profile: raises, calls over their limit.
- ``10``: an edit in place with size and mtime put back, then a search;
  ``shell-read`` and another writer; ``/proc/1/cmdline`` in the sandbox; modes
  of new files under umask 022; the error cap among the documented differences.
- First round (must still hold): ``r1-race`` (``race.py``, 200 rounds per
  surface), ``r1-shell`` (8 swaps by a shell command holding the lock, 4 calls
  of another session each), ``r1-regex`` (``server.py``'s two catastrophic
  patterns, twice), ``r1-lost`` (4 writers x 50 increments with version
  preconditions), ``r1-kill`` (40 SIGKILLs of a writer), ``r1-payloads``
  (script payloads in every part of 4 files: raw in 7 pages, run in Chromium).

Run (20-30 minutes on a loaded 2-core machine; nice it)::

    nice uv run --no-sync python benchmarks/redteam.py \
        [--tree before=/work/scratch/redteam/before --tree after=.] [--only 1,4]

It prints a markdown table (attack, what was measured on each side, pass when
the defence held on the last tree) and writes everything to
``benchmarks/results/redteam.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hardening_store as hs

RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parents[1]
WALL = 30.0
DEFAULT_BEFORE = Path("/work/scratch/redteam/before")
"""A worktree of 4e9ad55, the code before issue 19's fixes, with its own ``uv sync``."""
OUTER_PIDS = 1024
FORK_BOMB = ":(){ :|:& };:; sleep 10"
NOTE = "---\nname: {name}\ndescription: {desc}\n---\n# {name}\n{body}\n"


# -- running one side ------------------------------------------------------------


def python_of(tree: Path) -> str:
    """The checkout's own interpreter (its ``uv sync``), else this one."""
    own = tree / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def run(tree: Path, argv: list[str], wall: float = WALL, env: dict[str, str] | None = None,
        cgroup: Path | None = None, space: int = hs.ADDRESS_SPACE) -> dict[str, Any]:
    """``argv`` (``PY`` replaced by the tree's Python) under the caps of hardening_store.

    ``space`` is the address-space cap: the shell's probes need more than the 2 GiB
    default (older shells asked for 4 GiB and failed under less).
    """
    argv = [python_of(tree) if a == "PY" else a for a in argv]
    if cgroup is not None:  # the child joins the cgroup before it execs Python
        argv = ["sh", "-c", f'echo $$ > "{cgroup}/cgroup.procs" && exec "$@"', "sh", *argv]
    saved, saved_space = dict(os.environ), hs.ADDRESS_SPACE
    os.environ.update(env or {})
    hs.ADDRESS_SPACE = space
    try:
        return hs._run(argv, tree / "src", wall)
    finally:
        hs.ADDRESS_SPACE = saved_space
        os.environ.clear()
        os.environ.update(saved)


SHELL_SPACE = 5 << 30


def snippet(tree: Path, code: str, *args: str, wall: float = WALL,
            env: dict[str, str] | None = None, cgroup: Path | None = None,
            space: int = hs.ADDRESS_SPACE) -> dict[str, Any]:
    """Run Python ``code`` (it prints one JSON line) in a capped child of ``tree``."""
    return run(tree, ["PY", "-c", code, *args], wall, env, cgroup, space)


def saw(report: dict[str, Any]) -> Any:
    """What the child printed as JSON, or None (killed, crashed)."""
    value = report.get("saw")
    return value if isinstance(value, dict) else None


def outcome(report: dict[str, Any]) -> str:
    """A short word for how a child ended: ok, killed, or its exit and last error line."""
    if report["exit"] == 0:
        return "ok"
    if isinstance(report["exit"], str):
        return f"killed at {report['wall_s']:.0f} s"
    return f"exit {report['exit']}: {report.get('stderr', '')[-90:]}"


@contextlib.contextmanager
def pids_cgroup(limit: int = OUTER_PIDS) -> Iterator[Path | None]:
    """A pids cgroup of this benchmark's own (v1 or v2), or None where none can be made."""
    sys.path.insert(0, str(HERE / "src"))
    from memdir.tools._pids import pids_parent

    try:
        parent = pids_parent(Path("/proc/self/mountinfo").read_text(),
                             Path("/proc/self/cgroup").read_text())
    except OSError:
        parent = None
    if parent is None:
        yield None
        return
    group = parent / f"redteam-{os.getpid()}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(limit))
    except OSError:
        yield None
        return
    try:
        yield group
    finally:
        deadline = time.monotonic() + 10
        while group.exists() and time.monotonic() < deadline:
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), 9)
            with contextlib.suppress(OSError):
                for child in group.iterdir():
                    if child.is_dir():
                        child.rmdir()
                group.rmdir()
            time.sleep(0.05)


# -- browse as a process ---------------------------------------------------------


_BROWSE = r"""
import json, sys, time, subprocess, re, os
import httpx
argv, pages = json.loads(sys.argv[1]), json.loads(sys.argv[2])
proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
url = None
started = time.monotonic()
lines = []
for line in proc.stderr:  # the outer wall-clock cap bounds a server that never says
    lines.append(line)
    found = re.search(r"open (http\S+)", line)
    if found:
        url = found.group(1)
        break
out = {"url_shape": None, "pages": {}, "start_s": round(time.monotonic() - started, 1)}
try:
    if url is None:
        out["failed"] = "".join(lines)[-300:]
    else:
        with httpx.Client(follow_redirects=True, timeout=float(sys.argv[3])) as client:
            first = client.get(url)
            tree = str(first.url)
            out["url_shape"] = re.sub(r"[A-Za-z0-9_-]{20,}", "TOKEN", url.split(":", 2)[2])
            out["set_cookie"] = [r.headers.get("set-cookie") for r in [*first.history, first]
                                 if r.headers.get("set-cookie")]
            out["csp"] = first.headers.get("content-security-policy")
            out["referrer_policy"] = first.headers.get("referrer-policy")
            out["cookie_is_mcp_token"] = any(os.environ.get("MEMDIR_MCP_TOKEN", "\0") in c
                                             for c in out["set_cookie"])
            for name, rel in pages.items():
                t0 = time.monotonic()
                try:
                    r = client.get(tree + rel)
                    out["pages"][name] = [r.status_code, round(time.monotonic() - t0, 2)]
                except httpx.HTTPError as exc:
                    out["pages"][name] = [type(exc).__name__, round(time.monotonic() - t0, 2)]
finally:
    proc.kill()
    proc.wait()
print(json.dumps(out))
"""


def browse(tree: Path, store: Path, pages: dict[str, str], timeout: float = 60.0,
           env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start ``memdir browse`` of ``tree`` on ``store``; each page's status and seconds."""
    argv = [python_of(tree), "-m", "memdir", "browse", str(store), "--port", "0"]
    return snippet(tree, _BROWSE, json.dumps(argv), json.dumps(pages), str(timeout),
                   wall=timeout * (len(pages) + 2) + 60, env=env)


def pages_summary(report: dict[str, Any]) -> str:
    seen = saw(report)
    if seen is None:
        return outcome(report)
    if "failed" in seen:
        return f"no server: {seen['failed'][-80:]}"
    return ", ".join(f"{name} {code} {secs}s" for name, (code, secs) in seen["pages"].items())


# -- stores ----------------------------------------------------------------------


DEEP: list[Path] = []
"""Deep stores made, removed at the end without recursion."""


def deep_store(where: Path, levels: int, name: str) -> Path:
    """A store with one file ``levels`` folders deep, made by hand (os.mkdir at a handle)."""
    root = where / name
    root.mkdir()
    DEEP.append(root)
    (root / "top.md").write_text(NOTE.format(name="top", desc="Top", body="top"))
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    note = os.open("leaf.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
    os.write(note, NOTE.format(name="leaf", desc="Deep", body="leaf").encode())
    os.close(note)
    os.close(fd)
    return root


def headings_text() -> str:
    head = "---\nname: headings\ndescription: Very many sibling headings\n---\n"
    letters = "abcdefghijklmnopqrstuvwxyz"
    lines = [f"## {letters[i // 26 % 26]}{letters[i % 26]}\n" for i in range(85_000)]
    return head + "".join(lines)


# -- item 1: the alias header --------------------------------------------------------


def item1(tree: Path, where: Path) -> dict[str, Any]:
    store = where / "alias"
    if not store.exists():
        store.mkdir()
        (store / "b.md").write_text(hs.BOMB)
        (store / "normal.md").write_text(hs.NORMAL)
    out: dict[str, Any] = {}
    for command in ("lint", "health"):
        r = run(tree, ["PY", "-m", "memdir", command, str(store)], wall=30)
        out[command] = r
    out["browse"] = browse(tree, store, {"tree": "", "file": "file/b.md", "health": "health"},
                           timeout=15)
    out["summary"] = (f"lint {out['lint']['wall_s']}s/{out['lint']['peak_rss_mib']}MiB "
                      f"({outcome(out['lint'])[:30]}); health {out['health']['wall_s']}s/"
                      f"{out['health']['peak_rss_mib']}MiB ({outcome(out['health'])[:30]}); "
                      f"browse: {pages_summary(out['browse'])}")
    return out


# -- item 3: 85,000 headings ----------------------------------------------------------


_CREATE = r"""
import asyncio, json, sys
from pathlib import Path
from memdir.store import Store
from memdir.tools import make_toolset
store = Store(Path(sys.argv[1]), create=True)
text = Path(sys.argv[2]).read_text()
r = asyncio.run(make_toolset(sys.argv[3], store).call(
    "create", {"path": sys.argv[4], "file_text": text}))
print(json.dumps({"refused": r.is_error, "answer": r.content[:100]}))
"""


def item3(tree: Path, where: Path) -> dict[str, Any]:
    store = where / f"headings-{tree.name}"
    source = where / "headings.txt"
    if not source.exists():
        source.write_text(headings_text())
    made = snippet(tree, _CREATE, str(store), str(source), "write", "/memories/headings.md")
    (store / "ok.md").write_text(NOTE.format(name="ok", desc="A good file", body="fine"))
    health = run(tree, ["PY", "-m", "memdir", "health", str(store)], wall=60)
    pages = browse(tree, store, {"tree": "", "health": "health", "file": "file/headings.md"},
                   timeout=40)
    error = health.get("stderr", "")
    return {"create": made, "health": health, "browse": pages,
            "summary": (f"{source.stat().st_size // 1000} KB via create: "
                        f"{'refused' if (saw(made) or {}).get('refused') else 'written'}; "
                        f"health {health['wall_s']}s/{health['peak_rss_mib']}MiB "
                        f"({'ok' if health['exit'] == 0 else error[-60:] or outcome(health)}); "
                        f"browse: {pages_summary(pages)}")}


# -- item 4: fork bomb ---------------------------------------------------------------


_FORK = r"""
import asyncio, json, os, sys, threading, time
from pathlib import Path
from memdir.store import Store
from memdir.tools import make_toolset
def count(root):
    kids = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                f = Path(f"/proc/{e}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if f[0] != "Z":
                kids.setdefault(int(f[1]), []).append(int(e))
    n, todo = 0, list(kids.get(root, []))
    while todo:
        p = todo.pop(); n += 1; todo += kids.get(p, [])
    return n
peak, done = [0], threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], count(os.getpid())); time.sleep(0.02)
store = Store(Path(sys.argv[1]), create=True)
try:
    tools = make_toolset("shell", store)
except Exception as exc:
    print(json.dumps({"refused": f"{type(exc).__name__}: {exc}"[:200]})); sys.exit(0)
threading.Thread(target=sample, daemon=True).start()
t0 = time.monotonic()
r = asyncio.run(tools.call("bash", {"command": sys.argv[2]}))
took = time.monotonic() - t0
time.sleep(0.3); done.set()
print(json.dumps({"peak_processes": peak[0], "left_after": count(os.getpid()),
                  "seconds": round(took, 1), "answer": r.content[-160:]}))
"""


def item4(tree: Path, where: Path) -> dict[str, Any]:
    store = where / f"fork-{tree.name}"
    with pids_cgroup() as group:
        r = snippet(tree, _FORK, str(store), FORK_BOMB, wall=90, cgroup=group,
                    space=SHELL_SPACE)
    seen = saw(r) or {}
    if "refused" in seen:
        summary = f"refused: {seen['refused'][:90]}"
    elif seen:
        summary = (f"peak {seen['peak_processes']} processes at once (outer cap "
                   f"{OUTER_PIDS if group else 'none'}), {seen['left_after']} left, "
                   f"answered in {seen['seconds']} s")
    else:
        summary = outcome(r)
    return {"run": r, "contained_by": str(group), "summary": summary}


# -- item 5: the browse token ------------------------------------------------------------


_DRIVER = r"""
import json, re, shutil, subprocess, sys, tempfile, time
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
def start_browse(argv):
    # the server keeps the address-space cap Chromium cannot run under
    argv = ["prlimit", f"--as={2 << 30}", "--", *argv]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    for line in proc.stderr:  # the outer wall-clock cap bounds a server that never says
        m = re.search(r"open (http\S+)", line)
        if m:
            return proc, m.group(1)
    return proc, None
def chromium():
    opts = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--user-data-dir=" + tempfile.mkdtemp()):
        opts.add_argument(flag)
    opts.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = webdriver.Chrome(options=opts, service=Service(shutil.which("chromedriver")))
    driver.set_page_load_timeout(60)
    return driver
"""

_CHROME = _DRIVER + r"""
import os, socket, threading
from pathlib import Path
store, argv = sys.argv[1], json.loads(sys.argv[2])
got = []
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(16); sock.settimeout(0.2)
port = sock.getsockname()[1]
stop = threading.Event()
def serve():
    while not stop.is_set():
        try:
            conn, _ = sock.accept()
        except TimeoutError:
            continue
        with conn:
            conn.settimeout(2); data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk: break
                    data += chunk
            except TimeoutError:
                pass
            if data:
                got.append(data.decode("latin-1"))
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
threading.Thread(target=serve, daemon=True).start()
Path(store, "lure.md").write_text(
    f"---\nname: lure\ndescription: points at another port\n---\n# Lure\n\n"
    f"![pixel](http://127.0.0.1:{port}/pixel.png)\n\n"
    f"[the port's page](http://127.0.0.1:{port}/clicked)\n")
proc, url = start_browse(argv)
driver = chromium()
try:
    driver.get(url)  # the printed URL: a login for cookie-based code, the tree page otherwise
    tree_url = driver.current_url
    driver.get(tree_url.split("?")[0] + "file/lure.md")
    time.sleep(1.5)
    loaded = list(got)
    links = driver.find_elements("link text", "the port's page")
    if links:
        links[0].click()
        deadline = time.monotonic() + 15
        while len(got) <= len(loaded) and time.monotonic() < deadline:
            time.sleep(0.05)
    token = re.search(r"[?/]token=([^&]+)|:\d+/([A-Za-z0-9_-]{20,})/", url)
    secret = next(g for g in token.groups() if g) if token else "\0"
    browse_port = url.split(":")[2].split("/")[0]
    # Chromium's own favicon fetch names the listener's page as its Referer: only a
    # Referer naming the browse server tells the listener something.
    print(json.dumps({
        "requests_while_loading": len(loaded),
        "with_cookie": sum("\r\ncookie:" in g.lower() for g in got),
        "with_browse_referer": sum(bool(re.search(
            r"\r\nreferer: [^\r]*:" + browse_port + r"\b", g, re.I)) for g in got),
        "carrying_the_token": sum(secret in g for g in got),
        "mcp_token_sent": sum(os.environ.get("MEMDIR_MCP_TOKEN", "\0") in g for g in got),
        "requests": [g.split("\r\n")[0] for g in got]}))
finally:
    driver.quit(); proc.kill(); proc.wait(); stop.set()
"""


def item5(tree: Path, where: Path) -> dict[str, Any]:
    store = where / f"lure-{tree.name}"
    store.mkdir()
    (store / "ok.md").write_text(NOTE.format(name="ok", desc="A good file", body="fine"))
    env = {"MEMDIR_MCP_TOKEN": "mcp-bearer-secret-0123456789abcdef"}
    plain = browse(tree, store, {"tree": ""}, timeout=30, env=env)
    out: dict[str, Any] = {"headers": plain}
    seen = saw(plain) or {}
    cookie = ("the MCP token" if seen.get("cookie_is_mcp_token") else
              "yes" if seen.get("set_cookie") else "none")
    summary = (f"URL {seen.get('url_shape')}; cookie: "
               f"{cookie}; "
               f"CSP: {'yes' if seen.get('csp') else 'none'}")
    if shutil.which("chromium") and shutil.which("chromedriver"):
        argv = [python_of(tree), "-m", "memdir", "browse", str(store), "--port", "0"]
        # Chromium reserves far more address space than it uses: no cap on it here.
        chrome = snippet(tree, _CHROME, str(store), json.dumps(argv), wall=240, env=env,
                         space=resource.RLIM_INFINITY)
        out["chromium"] = chrome
        c = saw(chrome)
        summary += ("; Chromium to another port: " + (
            f"{c['requests_while_loading']} request(s) on load, {c['with_cookie']} with a "
            f"cookie, {c['carrying_the_token']} with the token, {c['mcp_token_sent']} with the "
            f"MCP token, {c['with_browse_referer']} with a Referer naming browse" if c
            else outcome(chrome)))
    out["summary"] = summary
    return out


# -- item 6: deep trees ------------------------------------------------------------------


_HISTORY_INIT = r"""
import json, sys
from pathlib import Path
from memdir.store import Store
from memdir.store.history import History
h = History(Store(Path(sys.argv[1])))
h.init(); h.snapshot("one")
print(json.dumps({"steps": len(h.steps())}))
"""


def item6(tree: Path, where: Path) -> dict[str, Any]:
    deep = deep_store(where, 1000, f"deep1000-{tree.name}")
    out: dict[str, Any] = {}
    for command in ("tree", "health"):
        out[command] = run(tree, ["PY", "-m", "memdir", command, str(deep)], wall=60)
    init = snippet(tree, _HISTORY_INIT, str(deep), wall=60)
    out["history-init"] = init
    out["verify"] = run(tree, ["PY", "-m", "memdir", "history", str(deep), "verify"], wall=60)
    for levels in (400, 600):
        store = deep_store(where, levels, f"deep{levels}-{tree.name}")
        out[f"browse-{levels}"] = browse(
            tree, store, {"tree": "", "file": "file/" + "d/" * levels + "leaf.md",
                          "health": "health"}, timeout=15)
    word = {name: ("ok" if out[name]["exit"] == 0 else
                   ("RecursionError" if "Recursion" in out[name].get("stderr", "") else
                    outcome(out[name])[:40])) for name in ("tree", "health", "verify")}
    out["summary"] = (f"1,000 deep: tree {word['tree']}, health {word['health']}, "
                      f"history verify {word['verify']} (init: {outcome(init)[:40]}); "
                      f"browse 400: {pages_summary(out['browse-400'])}; "
                      f"600: {pages_summary(out['browse-600'])}")
    return out


# -- item 7: planted .gitignore / .gitattributes --------------------------------------


_PLANTED = r"""
import asyncio, json, subprocess, sys
from pathlib import Path
from memdir.store import Store
from memdir.store.history import History
from memdir.tools import make_toolset
store = Store(Path(sys.argv[1]), create=True)
store.write("/memories/old.md", "---\nname: old\ndescription: d\n---\nold\n")
h = History(store); h.init(); h.snapshot("first")
shell = make_toolset("shell", store)
r = asyncio.run(shell.call("bash", {"command": sys.argv[2]}))
text = "---\nname: new\ndescription: d\n---\nline one\r\nline two\r\n"
store.write("/memories/new.md", text)
h.snapshot("second")
state = h.read_state(-1)
report = h.verify()
blob = subprocess.run(["git", "-C", str(store.root), "show", "HEAD:new.md"],
                      capture_output=True).stdout
h.restore(-1)
print(json.dumps({"shell": r.content[:80], "recorded": "/memories/new.md" in state,
                  "blob_exact": blob == text.encode(),
                  "restored_exact": (store.root / "new.md").is_file()
                                    and (store.root / "new.md").read_bytes() == text.encode(),
                  "verify_mismatches": len(report.mismatches), "verify_says": report.mismatches[:2],
                  "survives_restore": (store.root / "new.md").is_file()}))
"""


def item7(tree: Path, where: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, command in (("gitignore", "echo '*' > /memories/.gitignore"),
                          ("gitattributes", "printf '* text\\n' > /memories/.gitattributes")):
        out[name] = snippet(tree, _PLANTED, str(where / f"{name}-{tree.name}"), command,
                            space=SHELL_SPACE)
    ig, at = saw(out["gitignore"]), saw(out["gitattributes"])
    out["summary"] = (
        (f".gitignore: new file recorded {ig['recorded']}, verify {ig['verify_mismatches']} "
         f"mismatch(es), survives restore {ig['survives_restore']}" if ig
         else f".gitignore: {outcome(out['gitignore'])}") + "; " +
        (f".gitattributes ('* text', a CRLF file): snapshot holds its bytes "
         f"{at['blob_exact']}, restore gives them back {at['restored_exact']}" if at
         else f".gitattributes: {outcome(out['gitattributes'])}"))
    return out


# -- item 8: the trailing space -----------------------------------------------------------


_SPACE = r"""
import json, sys
from pathlib import Path
from memdir.store import Store
from memdir.tools.anthropic import MemoryToolAdapter
store = Store(Path(sys.argv[1]), create=True)
a = MemoryToolAdapter(store)
def call(**input):
    r = a.handle_sync({"type": "tool_use", "id": "t", "name": "memory", "input": input})
    return ("error: " if r["is_error"] else "ok: ") + r["content"][:70]
answers = [call(command="create", path="/memories/dir /x.txt", file_text="spacey"),
           call(command="create", path="/memories/dir/y.txt", file_text="plain"),
           call(command="view", path="/memories/dir /"),
           call(command="create", path="/memories/dir /y.txt", file_text="overwrite?"),
           call(command="delete", path="/memories/dir /")]
y = store.root / "dir" / "y.txt"
print(json.dumps({"answers": answers, "dir/y.txt survives": y.is_file(),
                  "dir/y.txt intact": y.is_file() and y.read_text() == "plain"}))
"""


def item8(tree: Path, where: Path) -> dict[str, Any]:
    r = snippet(tree, _SPACE, str(where / f"space-{tree.name}"))
    seen = saw(r)
    summary = (f"dir/y.txt survives {seen['dir/y.txt survives']}, intact "
               f"{seen['dir/y.txt intact']}; 'dir /x.txt': {seen['answers'][0][:40]}"
               if seen else outcome(r))
    return {"run": r, "summary": summary}


# -- item 9: exceptions instead of tool errors ---------------------------------------


_EXOTIC = r"""
import asyncio, json, sys
from pathlib import Path
from memdir.store import Store
from memdir.tools import make_toolset
store = Store(Path(sys.argv[1]), create=True)
store.write("/memories/a.md", "---\nname: a\ndescription: d\n---\nalpha\nbeta\n")
deep = []
for _ in range(100_000):
    deep = [deep]
huge = 10 ** 5000
lone = "x\udcffy"
calls = [("write", "view", {"path": deep}), ("write", "view", {"path": "/memories/a.md",
          "view_range": [huge, 2]}), ("write", "grep", {"pattern": "a", "max_results": huge}),
         ("anthropic", "create", {"path": "/memories/s.md", "file_text": lone}),
         ("anthropic", "insert", {"path": "/memories/a.md", "insert_line": 1, "insert_text": lone}),
         ("anthropic", "str_replace", {"path": "/memories/a.md", "old_str": "alpha",
                                       "new_str": lone}),
         ("write", "create", {"path": "/memories/t.md",
                              "file_text": "---\nname: t\ndescription: " + lone + "\n---\n"}),
         ("shell", "bash", {"command": "echo " + lone}),
         ("read", "grep", {"pattern": lone}), ("read", "toc", {"path": lone})]
raised, answers = [], []
sets = {}
for name, tool, args in calls:
    try:
        ts = sets.setdefault(name, make_toolset(name, store))
        r = asyncio.run(ts.call(tool, args))
        answers.append(f"{name}.{tool}: {'error' if r.is_error else 'ok'}: {r.content[:60]}")
    except BaseException as exc:
        raised.append(f"{name}.{tool}: {type(exc).__name__}")
print(json.dumps({"calls": len(calls), "raised": raised, "answers": answers}))
"""

_INDEX_SEARCH = r"""
import asyncio, sys
from pathlib import Path
from memdir.store import Store
from memdir.tools import make_toolset
try:
    r = asyncio.run(make_toolset("bm25", Store(Path(sys.argv[1]))).call(
        "search", {"query": "cherry"}))
    print("ok" if (not r.is_error and "n5" in r.content) else "wrong: " + r.content[:80])
except BaseException as exc:
    print("raised " + type(exc).__name__)
"""

_INDEX = r"""
import io, json, subprocess, sys, zipfile
from pathlib import Path
import numpy as np
from memdir.store import Store
from memdir.tools import _bm25index as bi
root, search_code = Path(sys.argv[1]), sys.argv[2]
store = Store(root, create=True)
for i in range(6):
    store.write(f"/memories/n{i}.md", f"---\nname: n{i}\ndescription: note {i}\n---\n"
                f"apple banana {'cherry ' * i}\n")
saved = root / ".memdir" / bi.INDEX_FILE
def search():
    # a new process each time: one process keeps its index (and what it loaded) per root
    try:
        done = subprocess.run([sys.executable, "-c", search_code, str(root)],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "no answer in 60 s"
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}: {done.stderr.strip()[-80:]}"
first = search()
good = saved.read_bytes() if saved.exists() else b""
crafted = {}
def npz(**arrays):
    buf = io.BytesIO(); np.savez(buf, **arrays); return buf.getvalue()
def meta(obj):
    return np.frombuffer(json.dumps(obj).encode(), dtype=np.uint8)
real = json.loads(np.load(io.BytesIO(good))["meta"].tobytes()) if good else {}
bomb = io.BytesIO()
with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
    for name, arr in (("meta", meta(real)), ("sizes", np.zeros(1, np.int64)),
                      ("counts", np.zeros(1, np.int32))):
        b = io.BytesIO(); np.save(b, arr); z.writestr(name + ".npy", b.getvalue())
    with z.open("ids.npy", "w", force_zip64=True) as f:
        head = b"{'descr': '<i4', 'fortran_order': False, 'shape': (1000000000,), }"
        f.write(b"\x93NUMPY\x01\x00" + (118).to_bytes(2, "little") + head.ljust(117) + b"\n")
        chunk = bytes(1 << 20)
        for _ in range(3815):  # 4 GB of zeros, 4 MB deflated
            f.write(chunk)
crafted["deflate-bomb"] = bomb.getvalue()
none = dict(sizes=np.zeros(0), ids=np.zeros(0), counts=np.zeros(0))
crafted["meta-a-list"] = npz(meta=meta([1]), **none)
crafted["meta-a-number"] = npz(meta=meta(5), **none)
crafted["files-not-a-list"] = npz(meta=meta({**real, "files": 7}), **none)
crafted["files-of-numbers"] = npz(meta=meta({**real, "files": [1]}), sizes=np.ones(1),
                                  ids=np.zeros(1), counts=np.zeros(1))
crafted["vocab-a-number"] = npz(meta=meta({**real, "vocab": 3}), **none)
crafted["2-d-sizes"] = npz(meta=meta({**real, "files": []}), sizes=np.zeros((2, 2)),
                           ids=np.zeros(0), counts=np.zeros(0))
for cut in (13, len(good) // 2, len(good) - 1):
    crafted[f"cut-at-{cut}"] = good[:cut]
for at in range(len(good) // 6, len(good), max(1, len(good) // 3)):
    b = bytearray(good); b[at] ^= 0xff; crafted[f"byte-{at}-flipped"] = bytes(b)
results = {}
for name, data in crafted.items():
    saved.write_bytes(data)
    results[name] = search()
bad = {k: v for k, v in results.items() if v != "ok"}
print(json.dumps({"index_file": saved.name, "first_search": first, "crafted": len(crafted),
                  "failed": len(bad), "examples": dict(list(bad.items())[:8])}))
"""


def _bad_store(where: Path, name: str) -> Path:
    root = where / name
    root.mkdir()
    (root / "ok.md").write_text(NOTE.format(name="ok", desc="A good file", body="fine"))
    return root


def item9(tree: Path, where: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    exotic = snippet(tree, _EXOTIC, str(where / f"exotic-{tree.name}"), wall=120,
                     space=SHELL_SPACE)
    out["exotic"] = exotic
    index = snippet(tree, _INDEX, str(where / f"index-{tree.name}"), _INDEX_SEARCH, wall=240)
    out["index"] = index
    browse_codes: dict[str, Any] = {}
    cases: dict[str, Callable[[Path], str]] = {
        "dangling": lambda r: (os.symlink("nowhere.md", r / "dangling.md"), "dangling.md")[1],
        "looping": lambda r: (os.symlink("loop.md", r / "loop.md"), "loop.md")[1],
        "non-utf8": lambda r: (Path(os.fsdecode(os.fsencode(r) + b"/bad-\xff.md")).write_text(
            NOTE.format(name="bad", desc="d", body="x")), "bad-%FF.md")[1],
        "100k-headings": lambda r: ((r / "big.md").write_text(
            "---\nname: big\ndescription: d\n---\n" + "# h\n" * 100_000), "big.md")[1],
    }
    for case, make in cases.items():
        store = _bad_store(where, f"bad-{case}-{tree.name}")
        rel = make(store)
        browse_codes[case] = browse(tree, store, {"tree": "", "health": "health",
                                                  "file": f"file/{rel}"},
                                    timeout=60 if case == "100k-headings" else 30)
    out["browse"] = browse_codes
    grep_store = _bad_store(where, f"grep-{tree.name}")
    (grep_store / "many.md").write_text(
        NOTE.format(name="many", desc="d", body="café line\n" * 20_000))
    pipe = subprocess.run(
        f'"{python_of(tree)}" -m memdir grep "{grep_store}" caf | head -c 10 >/dev/null',
        shell=True, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(tree / "src")})
    ascii_run = subprocess.run(
        [python_of(tree), "-m", "memdir", "grep", str(grep_store), "caf", "--max-results", "3"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(tree / "src"), "PYTHONIOENCODING": "ascii"})
    out["grep"] = {"closed_pipe_traceback": bool(re.search(r"Traceback|Error", pipe.stderr)),
                   "closed_pipe_stderr": pipe.stderr[-200:],
                   "ascii_exit": ascii_run.returncode,
                   "ascii_traceback": "Traceback" in ascii_run.stderr,
                   "ascii_out": ascii_run.stdout[:120]}
    ex, ix = saw(exotic), saw(index)
    bad_pages = sum(1 for r in browse_codes.values() for code, _ in
                    (saw(r) or {"pages": {"?": ["none", 0]}})["pages"].values() if code != 200)
    out["summary"] = (
        (f"exotic ToolSet.call: {len(ex['raised'])}/{ex['calls']} raised "
         f"({', '.join(ex['raised'])[:80]})" if ex else f"exotic: {outcome(exotic)}") + "; " +
        (f"saved index {ix['index_file']}: {ix['failed']}/{ix['crafted']} crafted files broke "
         f"search" if ix else f"index: {outcome(index)}") + "; " +
        f"browse bad entries: {bad_pages}/{3 * len(cases)} pages not 200; grep: traceback on "
        f"closed pipe {out['grep']['closed_pipe_traceback']}, with ascii stdout "
        f"{out['grep']['ascii_traceback']}")
    return out


# -- item 10: smaller ones ------------------------------------------------------------------


_SAME_SIZE = r"""
import asyncio, json, os, sys, time
from pathlib import Path
from memdir.store import Store
from memdir.tools import make_toolset
root = Path(sys.argv[1])
store = Store(root, create=True)
for i in range(5):
    store.write(f"/memories/n{i}.md", f"---\nname: n{i}\ndescription: note {i}\n---\napple {i}\n")
tools = make_toolset("bm25", store)
def ask(q):
    r = asyncio.run(tools.call("search", {"query": q}))
    return "/memories/n2.md" in r.content
before = ask("zebra")
path = root / "n2.md"
st = os.stat(path)
data = path.read_bytes().replace(b"apple", b"zebra")
with open(path, "r+b") as f:  # in place: same inode, same size
    f.write(data)
os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
time.sleep(2.5)  # past the index's trust in its last walk (RESCAN_SECONDS, 2 s)
after = ask("zebra")
fresh = make_toolset("bm25", Store(root))
r = asyncio.run(fresh.call("search", {"query": "zebra"}))
print(json.dumps({"found_before_edit": before, "found_after_edit": after,
                  "new_process_finds_it": "/memories/n2.md" in r.content}))
"""

_SHELL_READ = r"""
import asyncio, json, sys, threading, time
from pathlib import Path
from memdir.store import Store
from memdir.tools import make_toolset
root = Path(sys.argv[1])
store = Store(root, create=True)
store.write("/memories/a.md", "---\nname: a\ndescription: d\n---\nx\n")
waited = {}
def writer():
    time.sleep(0.8)
    t0 = time.monotonic()
    Store(root, lock_timeout=30).write("/memories/b.md", "---\nname: b\ndescription: d\n---\ny\n")
    waited["s"] = time.monotonic() - t0
tools = make_toolset("shell-read", store)
th = threading.Thread(target=writer); th.start()
r = asyncio.run(tools.call("bash", {"command": "sleep 4; cat /proc/1/cmdline | tr '\\0' ' '"}))
th.join()
print(json.dumps({"writer_waited_s": round(waited["s"], 2), "pid1": r.content[:300],
                  "host_path_inside": str(root) in r.content}))
"""


def item10(tree: Path, where: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["same-size"] = snippet(tree, _SAME_SIZE, str(where / f"same-{tree.name}"), wall=60)
    out["shell-read"] = snippet(tree, _SHELL_READ, str(where / f"shellread-{tree.name}"),
                                space=SHELL_SPACE)
    docs = "".join(p.read_text() for p in (tree / "docs").glob("*.md"))
    out["error-cap-listed"] = bool(re.search(r"4,000[- ]character error cap|4,000 characters",
                                             docs))
    same, sr = saw(out["same-size"]), saw(out["shell-read"])
    out["summary"] = (
        (f"in-place same-size edit seen: {same['found_after_edit']} (a new process: "
         f"{same['new_process_finds_it']})" if same else f"same-size: {outcome(out['same-size'])}")
        + "; " + (f"shell-read: a writer waited {sr['writer_waited_s']} s, host path in "
                  f"/proc/1/cmdline {sr['host_path_inside']}" if sr
                  else f"shell-read: {outcome(out['shell-read'])}")
        + f"; error cap in docs' differences: {out['error-cap-listed']}")
    return out


# -- first round ---------------------------------------------------------------------


def bench_json(tree: Path, script: str, args: list[str], wall: float,
               space: int = hs.ADDRESS_SPACE) -> dict[str, Any]:
    """Another benchmark of this checkout, run on ``tree``'s code (``--json``), capped."""
    return run(tree, ["PY", str(HERE / "benchmarks" / script), *args, "--json"], wall=wall,
               space=space)


RACE_ATTEMPTS = 200
"""Rounds of racing calls per surface (11 or 12 calls each): 2,200 and 2,400 calls."""


def r1_race(tree: Path, where: Path) -> dict[str, Any]:
    """benchmarks/race.py on ``tree``'s code: the write and read sets, the Anthropic profile."""
    out: dict[str, Any] = {}
    for surface in ("memdir", "anthropic"):
        r = bench_json(tree, "race.py", ["--attempts", str(RACE_ATTEMPTS), "--surface", surface],
                       wall=240)
        seen = saw(r)
        out[surface] = {"run": r, "attempts": sum(c["attempts"] for c in seen.values())
                        if seen else None,
                        "escapes": sum(c["escapes"] for c in seen.values()) if seen else None}
    out["summary"] = "; ".join(
        f"{name}: {v['escapes']} escapes over {v['attempts']} racing calls"
        if v["attempts"] is not None else f"{name}: {outcome(v['run'])}"
        for name, v in out.items())
    return out


_SHELL_SWAP = r"""
import asyncio, json, shutil, sys, threading, time
from pathlib import Path
from memdir.store import Store
from memdir.tools import make_toolset
root, host, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
note = "---\nname: {0}\ndescription: d\n---\n{0}\n"
(host / "sub").mkdir(parents=True)
(host / "sub" / "keep.md").write_text(note.format("HOSTSECRET"))
def host_state():
    return sorted((str(p.relative_to(host)), p.read_bytes() if p.is_file() else b"")
                  for p in host.rglob("*"))
expected = host_state()
store = Store(root, create=True)
shell = make_toolset("shell", store)
other = Store(root, lock_timeout=30)
attempts, escapes, answers = 0, 0, []
for i in range(rounds):
    store.write("/memories/people/sub/x.md", note.format("x"))
    def waiting(i=i):
        global attempts, escapes
        deadline = time.monotonic() + 20
        while not (root / "people").is_symlink() and time.monotonic() < deadline:
            time.sleep(0.005)  # the command has swapped the folder, holding the lock
        for act in (lambda: other.read("/memories/people/sub/keep.md"),
                    lambda: other.delete("/memories/people/sub"),
                    lambda: other.rename("/memories/people/sub", f"/memories/pulled-{i}"),
                    lambda: other.write("/memories/people/sub/new.md", note.format("new"))):
            attempts += 1
            try:
                seen = str(act())
            except Exception as exc:
                seen = type(exc).__name__
            if "HOSTSECRET" in seen or host_state() != expected:
                escapes += 1
                shutil.rmtree(host); (host / "sub").mkdir(parents=True)
                (host / "sub" / "keep.md").write_text(note.format("HOSTSECRET"))
    waiter = threading.Thread(target=waiting)
    waiter.start()
    r = asyncio.run(shell.call("bash", {"command":
        f"rm -rf aside; mv people aside; ln -s {host} people; sleep 0.8"}))
    waiter.join()
    answers.append(r.content[-80:])
print(json.dumps({"rounds": rounds, "attempts": attempts, "escapes": escapes,
                  "last_answer": answers[-1]}))
"""
SHELL_SWAP_ROUNDS = 8


def r1_shell_swap(tree: Path, where: Path) -> dict[str, Any]:
    """A shell command swaps a folder for a link to a host folder while holding the lock."""
    r = snippet(tree, _SHELL_SWAP, str(where / "store"), str(where / "host"),
                str(SHELL_SWAP_ROUNDS), wall=180, space=SHELL_SPACE)
    seen = saw(r)
    return {"run": r, "summary": (f"{seen['escapes']} escapes over {seen['attempts']} calls "
                                  f"of another session ({seen['rounds']} swaps)"
                                  if seen else outcome(r))}


_REGEX = r"""
import asyncio, json, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import server
tree, reps = Path(sys.argv[2]), int(sys.argv[3])
probe = server.Probe()
with tempfile.TemporaryDirectory() as tmp:
    store = server._make_store(tree, Path(tmp))
    asyncio.run(server.probe_regex(probe, tree, store, reps))
print(json.dumps(probe.areas["regex"]))
"""


def r1_regex(tree: Path, where: Path) -> dict[str, Any]:
    """benchmarks/server.py's regex probe on ``tree``'s ``memdir serve``."""
    # this checkout's Python runs the client (httpx2, mcp); tree's venv runs the server
    r = run(tree, [sys.executable, "-c", _REGEX, str(HERE / "benchmarks"), str(tree), "2"],
            wall=150)
    seen = saw(r)
    return {"run": r, "summary": (f"{seen['failures']}/{seen['attempts']} catastrophic "
                                  f"patterns unanswered in 15 s ({'; '.join(seen['notes'])})"
                                  if seen else outcome(r))}


_LOST = r"""
import json, sys
from pathlib import Path
from memdir.store import Store
from memdir.store._errors import StoreError
root, n = Path(sys.argv[1]), int(sys.argv[2])
store = Store(root, lock_timeout=60)
done = conflicts = 0
while done < n:
    text = store.read("/memories/counter.md")
    version = store.version("/memories/counter.md")
    value = int(text.rsplit("\n", 2)[-2])
    try:
        store.write("/memories/counter.md", text + f"{value + 1}\n", expect=version)
        done += 1
    except StoreError:
        conflicts += 1
print(json.dumps({"done": done, "conflicts": conflicts}))
"""

_KILLED = r"""
import sys
from pathlib import Path
from memdir.store import Store
store = Store(Path(sys.argv[1]))
big = "---\nname: f\ndescription: d\n---\n" + "B" * 400_000 + "\n"
small = "---\nname: f\ndescription: d\n---\nsmall\n"
print("ready", flush=True)
while True:
    store.write("/memories/f.md", big)
    store.write("/memories/f.md", small)
"""

LOST_WRITERS, LOST_EACH, KILLS = 4, 50, 40


def _capped(tree: Path, code: str, *args: str) -> subprocess.Popen[str]:
    """``code`` in a child of ``tree``'s Python under hardening_store's address-space cap."""
    return subprocess.Popen([python_of(tree), "-c", code, *args], text=True,
                            stdout=subprocess.PIPE, preexec_fn=hs._cap,
                            env={**os.environ, "PYTHONPATH": str(tree / "src")})


def r1_lost(tree: Path, where: Path) -> dict[str, Any]:
    """4 processes x 50 increments of one counter, each write with the version it read."""
    root = where / "lost"
    root.mkdir()
    (root / "counter.md").write_text("---\nname: counter\ndescription: d\n---\n0\n")
    procs = [_capped(tree, _LOST, str(root), str(LOST_EACH)) for _ in range(LOST_WRITERS)]
    reports = []
    try:
        for p in procs:
            reports.append(json.loads(p.communicate(timeout=300)[0].strip().splitlines()[-1]))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    last = int((root / "counter.md").read_text().rsplit("\n", 2)[-2])
    done = sum(r["done"] for r in reports)
    refused = sum(r["conflicts"] for r in reports)
    return {"increments": done, "final": last, "lost": done - last,
            "conflicts_refused": refused,
            "summary": f"{done - last} lost of {done} increments ({refused} stale writes refused)"}


def r1_kill(tree: Path, where: Path) -> dict[str, Any]:
    """A writer of a 400 KB and a small version SIGKILLed at random moments: is f.md whole?"""
    root = where / "killed"
    root.mkdir()
    small = "---\nname: f\ndescription: d\n---\nsmall\n"
    whole = (small, "---\nname: f\ndescription: d\n---\n" + "B" * 400_000 + "\n")
    (root / "f.md").write_text(small)
    corrupt = 0
    rng = random.Random(19)
    for _ in range(KILLS):
        p = _capped(tree, _KILLED, str(root))
        try:
            assert p.stdout is not None
            p.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.25))
        finally:
            p.kill()
            p.wait()
        corrupt += (root / "f.md").read_text() not in whole
    return {"kills": KILLS, "corrupt": corrupt,
            "summary": f"{corrupt} corrupt files after {KILLS} SIGKILLs"}


_MARK = "document.documentElement.dataset.pwned"
_PAYLOADS = [f"<script>{_MARK}='script'</script>", f"<img src=x onerror=\"{_MARK}='img'\">",
             f"\"><svg onload=\"{_MARK}='svg'\">", f"javascript:{_MARK}='link'"]

_PAYLOAD_PAGES = _DRIVER + r"""
import httpx
argv, pages, payloads = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
proc, url = start_browse(argv)
found, fetched, ran, loaded = [], 0, [], 0
try:
    with httpx.Client(follow_redirects=True, timeout=60) as c:
        tree = str(c.get(url).url)
        for name, rel in pages.items():
            body = c.get(tree + rel).text
            fetched += 1
            found += [f"{name}: {p}" for p in payloads if p[0] in "<\"" and p in body]
            if re.search(r'href="javascript:', body, re.I):
                found.append(f"{name}: javascript: link")
    if shutil.which("chromedriver"):
        driver = chromium()
        try:
            driver.get(url)
            for name, rel in pages.items():
                driver.get(tree + rel)
                time.sleep(0.3)
                loaded += 1
                for link in driver.find_elements("css selector", "a[href^='javascript:' i]"):
                    link.click()
                mark = driver.execute_script("return document.documentElement.dataset.pwned")
                if mark:
                    ran.append(f"{name}: {mark}")
        finally:
            driver.quit()
finally:
    proc.kill(); proc.wait()
print(json.dumps({"pages": fetched, "unescaped": found, "chromium_pages": loaded,
                  "scripts_ran": ran}))
"""


def r1_payloads(tree: Path, where: Path) -> dict[str, Any]:
    """Script payloads in every part of four files: raw in a page? run in Chromium?"""
    root = where / "payload"
    root.mkdir()
    for i, payload in enumerate(_PAYLOADS):
        (root / f"p{i}.md").write_text(
            f"---\nname: p{i}\ndescription: {json.dumps(payload)}\nmetadata:\n  x: "
            f"{json.dumps(payload)}\n---\n# {payload}\n\n{payload}\n\n[{payload}]({payload})\n"
            f"see /memories/{payload}.md\n")
    pages = {"tree": "", **{f"file{i}": f"file/p{i}.md" for i in range(len(_PAYLOADS))},
             "search": "search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "health": "health"}
    argv = [python_of(tree), "-m", "memdir", "browse", str(root), "--port", "0"]
    # Chromium reserves far more address space than it uses: no cap on it here.
    r = snippet(tree, _PAYLOAD_PAGES, json.dumps(argv), json.dumps(pages),
                json.dumps(_PAYLOADS), wall=300, space=resource.RLIM_INFINITY)
    seen = saw(r)
    summary = (f"{len(seen['unescaped'])} unescaped payloads over {seen['pages']} pages; "
               f"{len(seen['scripts_ran'])} scripts ran over {seen['chromium_pages']} pages "
               f"in Chromium" if seen else outcome(r))
    return {"run": r, "summary": summary}


FUZZ_EXAMPLES = 100
"""Generated calls per in-process surface of benchmarks/fuzz.py (a shell set: a quarter)."""


def fuzz_counts(tree: Path, where: Path) -> dict[str, Any]:
    """benchmarks/fuzz.py's in-process surfaces (every tool set, the adapter) on ``tree``."""
    r = bench_json(tree, "fuzz.py", ["--examples", str(FUZZ_EXAMPLES), "--only",
                                     "toolset,adapter"], wall=420, space=SHELL_SPACE)
    seen = saw(r)
    if not seen:
        return {"run": r, "summary": outcome(r)}
    rows = [row for row in seen["rows"] if "skipped" not in row]
    calls = sum(row["calls"] for row in rows)
    raises = sum(row["raises"] for row in rows)
    over = sum(row["over_time"] for row in rows)
    kinds: dict[str, int] = {}
    for row in rows:
        for key, n in row.get("raised", {}).items():
            kinds[key] = kinds.get(key, 0) + n
    peak = max((row["peak_mb"] for row in rows), default=0)
    return {"run": {k: v for k, v in r.items() if k != "saw"}, "rows": rows, "calls": calls,
            "raises": raises, "over_time": over, "peak_mb": peak, "kinds": kinds,
            "summary": (f"{raises} raised of {calls} calls ({over} over time, one call's "
                        f"peak {peak} MB); " + ", ".join(f"{k} x{n}" for k, n in
                                                        sorted(kinds.items()))[:120])}


# -- running an item -----------------------------------------------------------------


def store_items(tree: Path, where: Path, names: list[str]) -> dict[str, Any]:
    """hardening_store's probes for items 1, 2, 6, 8 and 10 (run from there)."""
    folder = where / f"hs-{tree.name}"
    folder.mkdir()
    try:
        probes = hs._probes(folder, WALL)
        return {name: probes[name](tree / "src") for name in names}
    finally:
        for made in folder.iterdir():  # hardening_store's stores include a deep one
            hs._remove(made)


ITEMS: dict[str, Callable[[Path, Path], dict[str, Any]]] = {
    "1": item1, "3": item3, "4": item4, "5": item5, "6": item6, "7": item7, "8": item8,
    "9": item9, "10": item10, "fuzz": fuzz_counts, "r1-race": r1_race,
    "r1-shell": r1_shell_swap, "r1-regex": r1_regex, "r1-lost": r1_lost, "r1-kill": r1_kill,
    "r1-payloads": r1_payloads,
}
HS_ITEMS = {"1": ["alias-serve"], "2": ["str-replace-memdir", "str-replace-anthropic"],
            "6": ["deep-create"], "10": ["modes"]}
ORDER = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "fuzz", "10", "r1-race", "r1-shell",
         "r1-regex", "r1-lost", "r1-kill", "r1-payloads"]


def hs_summary(name: str, r: dict[str, Any]) -> str:
    seen = r.get("saw") if "saw" in r else r
    if name == "alias-serve":
        return (f"toc answered in {r['answer_s']} s ({r['answer'][:40]}); RSS "
                f"{r['rss_mib_at_answer']} -> {r['rss_mib_5s_later']} MiB 5 s later, "
                f"{r['cpu_s_in_the_5s_after']} s CPU")
    if name.startswith("str-replace"):
        if not isinstance(seen, dict):
            return f"{outcome(r)}"
        return (f"answered in {seen['answer_s']} s, second writer waited "
                f"{seen['second_writer_waited_s']} s")
    if name == "deep-create":
        return (f"create 1,000 deep: {'refused' if seen['refused'] else 'made'}"
                if isinstance(seen, dict) else outcome(r))
    if name == "modes":
        return f"modes {seen}" if isinstance(seen, dict) else outcome(r)
    return json.dumps(seen)[:100]


# -- the table -------------------------------------------------------------------------

Verdict = tuple[str, bool | None]
"""What a side showed for one row, and whether the defence held there (None: not measured)."""


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _ran(r: Any) -> Verdict:
    """A CLI run: seconds, peak MiB and how it ended; held if it ended by itself in 60 s
    with nothing on stderr (lint and health exit 1 on findings, printed to stdout; a
    Python error exits 1 too, with its traceback on stderr)."""
    if not isinstance(r, dict) or "wall_s" not in r:
        return "not run", None
    error = r.get("stderr", "")
    word = ("killed at cap" if isinstance(r["exit"], str) else
            f"exit {r['exit']}: ..{error[-36:]}" if error else f"exit {r['exit']}")
    held = (not isinstance(r["exit"], str) and r["exit"] in (0, 1) and not error
            and r["wall_s"] < 60)
    return f"{r['wall_s']} s, {r['peak_rss_mib']} MiB, {word}", held


def _pages(r: Any) -> Verdict:
    seen = saw(r) if isinstance(r, dict) else None
    if seen is None:
        return (outcome(r) if isinstance(r, dict) else "not run"), None if r is None else False
    if "failed" in seen:
        return "no server", False
    codes = [code for code, _ in seen["pages"].values()]
    slowest = max((secs for _, secs in seen["pages"].values()), default=0)
    bad = sum(not _answered(code) for code in codes)
    return f"{bad} of {len(codes)} pages 5xx/none (slowest {slowest} s)", bad == 0


def _answered(code: Any) -> bool:
    """A page answered (a 404 for a file that cannot be shown is an answer; a 500 is not)."""
    return isinstance(code, int) and code < 500


def _all(*verdicts: Verdict) -> Verdict:
    shown = "; ".join(v[0] for v in verdicts)
    held = [v[1] for v in verdicts]
    return shown, None if None in held else all(held)


def _count(value: Any, of: Any, unit: str) -> Verdict:
    if value is None:
        return "not run", None
    return f"{value} of {of} {unit}", value == 0


def _saw_of(side: dict[str, Any], *keys: str) -> Any:
    part = _get(side, *keys)
    return saw(part) if isinstance(part, dict) and "wall_s" in part else part


def _serve(side: dict[str, Any]) -> Verdict:
    r = _get(side, "alias-serve", "raw")
    if not isinstance(r, dict) or "answer_s" not in r:
        return str(_get(side, "alias-serve", "summary") or "not run")[:60], (
            None if r is None else False)
    grew = round(r["rss_mib_5s_later"] - r["rss_mib_before_call"], 1)
    return (f"answer {r['answer_s']} s; RSS +{grew} MiB and {r['cpu_s_in_the_5s_after']} s "
            f"CPU in the 5 s after", grew < 32 and r["cpu_s_in_the_5s_after"] < 0.5)


def _replace(side: dict[str, Any], name: str) -> Verdict:
    r = _get(side, name, "raw")
    seen = _saw_of(side, name, "raw")
    if not isinstance(seen, dict):
        return (outcome(r) if isinstance(r, dict) else "not run"), None if r is None else False
    return (f"answer {seen['answer_s']} s, other writer waited "
            f"{seen['second_writer_waited_s']} s",
            seen["answer_s"] < 10 and seen["second_writer_waited_s"] < 5)


def _fork(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "run")
    if not isinstance(seen, dict):
        return str(_get(side, "attack", "summary") or "not run")[:60], None
    if "refused" in seen:
        return f"refused: {seen['refused'][:40]}", None
    return (f"{seen['peak_processes']} processes at once, {seen['left_after']} left after",
            seen["peak_processes"] <= 2 * 256)


def _cookie(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "headers")
    if not isinstance(seen, dict) or "set_cookie" not in seen:
        return "not run", None
    csp = seen.get("csp") or ""
    cookie = ("the MCP token" if seen["cookie_is_mcp_token"] else
              "set" if seen["set_cookie"] else "none")
    strict = bool(csp) and "http" not in csp and "*" not in csp
    return (f"cookie {cookie}; CSP {'strict' if strict else csp[:20] or 'none'}",
            not seen["cookie_is_mcp_token"] and not seen["set_cookie"] and strict)


def _chrome(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "chromium")
    if not isinstance(seen, dict):
        return "not run", None
    leaked = seen["carrying_the_token"] + seen["mcp_token_sent"] + seen["with_cookie"]
    return (f"{seen['requests_while_loading']} requests on load; {leaked} carrying a token "
            f"or cookie, {seen['with_browse_referer']} naming browse",
            seen["requests_while_loading"] == 0 and leaked == 0
            and seen["with_browse_referer"] == 0)


def _deep_words(side: dict[str, Any]) -> Verdict:
    parts = []
    held: bool | None = True
    for name in ("tree", "health", "verify"):
        shown, ok = _ran(_get(side, "attack", name))
        parts.append(f"{name} {shown.rsplit(', ', 1)[-1]}")
        held = None if ok is None or held is None else held and ok
    return ", ".join(parts), held


def _planted(side: dict[str, Any]) -> tuple[Verdict, Verdict]:
    ig, at = _saw_of(side, "attack", "gitignore"), _saw_of(side, "attack", "gitattributes")
    crashed = _get(side, "attack", "gitignore", "stderr") or ""
    first: Verdict = ((f"recorded {ig['recorded']}, verify {ig['verify_mismatches']} "
                       f"mismatches, kept by restore {ig['survives_restore']}",
                       ig["recorded"] and ig["survives_restore"])
                      if isinstance(ig, dict) else
                      ("restore deleted new.md (the probe's read of it failed)", False)
                      if "No such file" in crashed and "new.md" in crashed
                      else ("not run", None))
    second: Verdict = ((f"snapshot exact {at['blob_exact']}, restore exact "
                        f"{at['restored_exact']}", at["blob_exact"] and at["restored_exact"])
                       if isinstance(at, dict) else ("not run", None))
    return first, second


def _space(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "run")
    if not isinstance(seen, dict):
        return "not run", None
    lost = not seen["dir/y.txt intact"]
    return (f"{int(lost)} of 1 file of 'dir' lost; delete answered "
            f"{seen['answers'][-1].split(':')[0]}", not lost)


def _exotic(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "exotic")
    if not isinstance(seen, dict):
        return "not run", None
    return f"{len(seen['raised'])} of {seen['calls']} raised", not seen["raised"]


def _fuzz(side: dict[str, Any]) -> Verdict:
    part = _get(side, "attack")
    if not isinstance(part, dict) or "calls" not in part:
        return str(_get(side, "attack", "summary") or "not run")[:60], None
    per = round(part["raises"] * 5000 / max(part["calls"], 1))
    return (f"{part['raises']} raised, {part['over_time']} over time of {part['calls']} "
            f"(= {per}/5,000); peak {part['peak_mb']} MB",
            part["raises"] == 0 and part["over_time"] == 0)


def _index(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "index")
    if not isinstance(seen, dict):
        return "not run", None
    return _count(seen["failed"], seen["crafted"], "crafted files broke search")


def _bad_browse(side: dict[str, Any]) -> Verdict:
    cases = _get(side, "attack", "browse")
    if not isinstance(cases, dict):
        return "not run", None
    bad, total, which = 0, 0, []
    for case, r in cases.items():
        seen = saw(r) or {"pages": {"?": ["none", 0]}}
        codes = [code for code, _ in seen.get("pages", {"?": ["none", 0]}).values()]
        total += max(len(codes), 3)
        wrong = sum(not _answered(code) for code in codes) + max(0, 3 - len(codes))
        bad += wrong
        if wrong:
            which.append(case)
    return f"{bad} of {total} pages 5xx/none ({', '.join(which) or 'none'})", bad == 0


def _grep(side: dict[str, Any]) -> Verdict:
    g = _get(side, "attack", "grep")
    if not isinstance(g, dict):
        return "not run", None
    n = int(g["closed_pipe_traceback"]) + int(g["ascii_traceback"])
    return f"{n} of 2 runs printed a traceback", n == 0


def _small(side: dict[str, Any], key: str) -> Verdict:
    seen = _saw_of(side, "attack", key)
    if not isinstance(seen, dict):
        return "not run", None
    if key == "same-size":
        return (f"seen: {seen['found_after_edit']}, by a new process: "
                f"{seen['new_process_finds_it']}",
                bool(seen["found_after_edit"] and seen["new_process_finds_it"]))
    return f"a writer waited {seen['writer_waited_s']} s", seen["writer_waited_s"] < 2


def _pid1(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "shell-read")
    if not isinstance(seen, dict):
        return "not run", None
    return f"host path shown: {seen['host_path_inside']}", not seen["host_path_inside"]


def _modes(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "modes", "raw")
    if not isinstance(seen, dict):
        return "not run", None
    return (f"file {seen['file']}, folder {seen['folder']}",
            seen["file"] == "0o600" and seen["folder"] == "0o700")


def _doc_cap(side: dict[str, Any]) -> Verdict:
    listed = _get(side, "attack", "error-cap-listed")
    if listed is None:
        return "not run", None
    return f"listed: {listed}", bool(listed)


def _race(surface: str) -> Callable[[dict[str, Any]], Verdict]:
    def read(side: dict[str, Any]) -> Verdict:
        return _count(_get(side, "attack", surface, "escapes"),
                      _get(side, "attack", surface, "attempts"), "calls escaped")
    return read


def _seen_count(key: str, of: str, unit: str) -> Callable[[dict[str, Any]], Verdict]:
    def read(side: dict[str, Any]) -> Verdict:
        seen = _saw_of(side, "attack", "run")
        if not isinstance(seen, dict):
            return str(_get(side, "attack", "summary") or "not run")[:60], None
        value = seen[key] if not isinstance(seen[key], list) else len(seen[key])
        return _count(value, seen[of], unit)
    return read


def _regex(side: dict[str, Any]) -> Verdict:
    seen = _saw_of(side, "attack", "run")
    if not isinstance(seen, dict):
        return str(_get(side, "attack", "summary") or "not run")[:60], None
    slowest = max(float(n.rsplit(": ", 1)[1].split()[0]) if "s" in n and "no answer" not in n
                  else 15.0 for n in seen["notes"])
    return (f"{seen['failures']} of {seen['attempts']} unanswered in 15 s (slowest "
            f"{slowest:.2f} s)", seen["failures"] == 0)


ROWS: list[tuple[str, str, Callable[[dict[str, Any]], Verdict]]] = [
    ("1", "alias header (62 B): `memdir lint`", lambda s: _ran(_get(s, "attack", "lint"))),
    ("1", "alias header: `memdir health`", lambda s: _ran(_get(s, "attack", "health"))),
    ("1", "alias header: browse tree, file, health",
     lambda s: _pages(_get(s, "attack", "browse"))),
    ("1", "alias header: `toc` through `memdir serve` (stdio, 2 GiB cap)", _serve),
    ("2", "`str_replace` of `a` in 512 KiB of `a` lines",
     lambda s: _replace(s, "str-replace-memdir")),
    ("2", "same, Anthropic profile, empty `old_str`",
     lambda s: _replace(s, "str-replace-anthropic")),
    ("3", "85,000 headings (510 KB, by `create`): `memdir health`",
     lambda s: _ran(_get(s, "attack", "health"))),
    ("3", "85,000 headings: browse tree, health, file",
     lambda s: _pages(_get(s, "attack", "browse"))),
    ("4", "fork bomb through the shell (outer cgroup 1,024)", _fork),
    ("5", "browse with `MEMDIR_MCP_TOKEN` set: cookie, CSP", _cookie),
    ("5", "Chromium on a file naming another loopback port", _chrome),
    ("6", "1,000 folders deep: tree, health, history verify", _deep_words),
    ("6", "browse at 400 and 600 levels",
     lambda s: _all(_pages(_get(s, "attack", "browse-400")),
                    _pages(_get(s, "attack", "browse-600")))),
    ("6", "`create` 1,000 levels deep",
     lambda s: ((lambda seen: (f"refused {seen['refused']}", bool(seen["refused"]))
                 if isinstance(seen, dict) else ("not run", None))(
                     _saw_of(s, "deep-create", "raw")))),
    ("7", "`echo '*' > .gitignore` by the shell, then a new file", lambda s: _planted(s)[0]),
    ("7", "`* text` in .gitattributes, then a CRLF file", lambda s: _planted(s)[1]),
    ("8", "Anthropic `delete /memories/dir /` beside `dir/`", _space),
    ("9", "10 exotic calls through `ToolSet.call`", _exotic),
    ("9", "fuzz.py: every tool set and the adapter", _fuzz),
    ("9", "crafted `.memdir/bm25-index.npz`, each searched by a new process", _index),
    ("9", "browse on dangling/looping link, non-UTF-8 name, 100k headings", _bad_browse),
    ("9", "`memdir grep` into a closed pipe; ASCII stdout", _grep),
    ("10", "same-size in-place edit, mtime put back", lambda s: _small(s, "same-size")),
    ("10", "`shell-read` running 4 s: another writer's wait", lambda s: _small(s, "shell-read")),
    ("10", "`/proc/1/cmdline` inside the sandbox", _pid1),
    ("10", "modes of a new file and folder (umask 022)", _modes),
    ("10", "the 4,000-character error cap among the listed differences", _doc_cap),
    ("r1", "racing symlink swaps: write and read sets (race.py)", _race("memdir")),
    ("r1", "racing symlink swaps: Anthropic profile (race.py)", _race("anthropic")),
    ("r1", "swap by a shell command holding the lock", _seen_count("escapes", "attempts",
                                                                    "calls escaped")),
    ("r1", "catastrophic regexes over MCP (server.py)", _regex),
    ("r1", "4 writers x 50 increments with version preconditions",
     lambda s: _count(_get(s, "attack", "lost"), _get(s, "attack", "increments"),
                      "increments lost")),
    ("r1", "writer SIGKILLed mid-write", lambda s: _count(
        _get(s, "attack", "corrupt"), _get(s, "attack", "kills"), "kills left a corrupt file")),
    ("r1", "script payloads in 4 files: raw in 7 pages", lambda s: _payload(s, "unescaped")),
    ("r1", "same pages in Chromium: scripts run", lambda s: _payload(s, "scripts_ran")),
]
ROW_ITEM = {"r1": ["r1-race", "r1-shell", "r1-regex", "r1-lost", "r1-kill", "r1-payloads"]}


def _payload(side: dict[str, Any], key: str) -> Verdict:
    seen = _saw_of(side, "attack", "run")
    if not isinstance(seen, dict):
        return "not run", None
    if key == "unescaped":
        found = len(seen[key])
        return f"{found} found raw over {seen['pages']} pages", found == 0
    return _count(len(seen[key]), seen["chromium_pages"], "pages")


def _side(results: dict[str, Any], item: str, attack: str, label: str) -> dict[str, Any]:
    """The results one row reads: its item's, or for a first-round row, its attack's."""
    if item != "r1":
        return dict(_get(results, item, label) or {})
    key = {"race.py": "r1-race", "shell command": "r1-shell", "regexes": "r1-regex",
           "increments": "r1-lost", "SIGKILL": "r1-kill", "payloads": "r1-payloads",
           "Chromium": "r1-payloads"}
    name = next(v for k, v in key.items() if k in attack)
    return dict(_get(results, name, label) or {})


def table(results: dict[str, Any], labels: list[str]) -> str:
    """The per-row markdown table: each side's value and whether the defence held."""
    before, after = labels[0], labels[-1]
    shown = [before, after] if before != after else [after]
    lines = [f"| # | attack | {' | '.join(shown)} | result |", "|---" * (len(shown) + 3) + "|"]
    for item, attack, read in ROWS:
        wanted = "fuzz" if "fuzz.py" in attack else item
        if item != "r1" and wanted not in results:
            continue
        sides = {}
        for label in (before, after):
            side = (_side(results, "fuzz", attack, label) if wanted == "fuzz"
                    else _side(results, item, attack, label))
            try:
                sides[label] = read(side) if side else ("not run", None)
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                sides[label] = (f"unreadable: {type(exc).__name__}", None)
        if all(v[0] == "not run" for v in sides.values()):
            continue
        held_after, held_before = sides[after][1], sides[before][1]
        verdict = ("pass" if held_after else "n/a" if held_after is None else "**FAIL**")
        if held_after and item != "r1":
            verdict += (" (broken before)" if held_before is False else
                        " (held before too)" if held_before else "")
        if before == after:
            verdict = verdict.split(" (")[0]
        values = " | ".join(sides[label][0] for label in shown)
        lines.append(f"| {item} | {attack} | {values} | {verdict} |")
    return "\n".join(lines)


def run_side(item: str, tree: Path, side: Path) -> dict[str, Any]:
    """Every attack of ``item`` on ``tree``'s code; a probe that breaks is reported, not fatal."""
    row: dict[str, Any] = {}
    if item in HS_ITEMS:
        (side / f"i{item}").mkdir()
        try:
            found = store_items(tree, side / f"i{item}", HS_ITEMS[item])
            for name, r in found.items():
                row[name] = {"raw": r, "summary": hs_summary(name, r)}
        except Exception as exc:  # noqa: BLE001 - the table shows it as not measured
            row["hardening_store"] = {"summary": f"probe failed: {exc!r}"[:200]}
    if item in ITEMS:
        (side / f"x{item}").mkdir()
        try:
            row["attack"] = ITEMS[item](tree, side / f"x{item}")
        except Exception as exc:  # noqa: BLE001 - the table shows it as not measured
            row["attack"] = {"summary": f"probe failed: {exc!r}"[:200]}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", action="append", default=None,
                        help="LABEL=CHECKOUT (a folder with src/ and its own .venv); the "
                             "first is the baseline, the last the code under test (default: "
                             f"before={DEFAULT_BEFORE} after=this checkout)")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated attacks to run, of: {','.join(ORDER)}")
    parser.add_argument("--out", type=Path, default=RESULTS / "redteam.json")
    parser.add_argument("--table-of", type=Path, default=None,
                        help="print the table of an earlier run's JSON instead of running")
    args = parser.parse_args()
    if args.table_of is not None:
        saved = json.loads(args.table_of.read_text(encoding="utf-8"))
        print(table(saved["items"], list(saved["trees"])))
        return
    wanted = args.only.split(",") if args.only else ORDER
    unknown = [w for w in wanted if w not in ORDER]
    if unknown:
        raise SystemExit(f"unknown attack(s) {unknown}; choose from {','.join(ORDER)}")
    pairs = args.tree or [f"before={DEFAULT_BEFORE}", f"after={HERE}"]
    if any("=" not in t for t in pairs):
        raise SystemExit("--tree takes LABEL=CHECKOUT, e.g. --tree before=../old")
    trees = {label: Path(path).resolve() for label, path in (t.split("=", 1) for t in pairs)}
    for label, tree in trees.items():
        if not (tree / "src" / "memdir").is_dir():
            raise SystemExit(f"{label}={tree}: no src/memdir there; check the commit out "
                             f"(git worktree add) and run uv sync in it")
    # Children may cache bytecode: a memdir CLI compiling inspect_ai's sources on every
    # start spends 20 s of a loaded machine before it serves a page.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    results: dict[str, dict[str, Any]] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="redteam-") as tmp:
        where = Path(tmp)
        try:
            for item in [i for i in ORDER if i in wanted]:
                for label, tree in trees.items():
                    side = where / label
                    side.mkdir(exist_ok=True)
                    t0 = time.monotonic()
                    row = run_side(item, tree, side)
                    results.setdefault(item, {})[label] = row
                    for name, part in row.items():
                        print(f"{item:>11} {label:<7} {name:<22} {part['summary']}",
                              flush=True)
                    print(f"{item:>11} {label:<7} ({time.monotonic() - t0:.0f} s)", flush=True)
        finally:
            for root in DEEP:  # shutil.rmtree recurses once per level
                with contextlib.suppress(OSError):
                    hs._remove(root)
    shown = table(results, list(trees))
    took = time.monotonic() - started
    print(f"\n{shown}\n\n{took / 60:.1f} min in all")
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps({"trees": {k: str(v) for k, v in trees.items()},
                                    "minutes": round(took / 60, 1), "table": shown,
                                    "items": results}, indent=2, default=str) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
