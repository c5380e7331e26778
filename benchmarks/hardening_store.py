"""Issue 19's store attacks on two versions of memdir, in the same run: time, peak RSS, outcome.

Every probe runs in a child process of its own whose ``PYTHONPATH`` puts one
``src/`` folder first (``--before-src``, e.g. the main worktree, and
``--after-src``, by default this checkout), under a 2 GiB address-space cap and
a wall-clock cap (``--wall``), so the old code's runaways end as "killed"
instead of filling the machine; what the probe itself saw (its answer, a second
writer's wait) it prints as JSON. Wall and CPU time come from the kernel
(``wait4``), peak RSS from the child's ``VmHWM`` in ``/proc``, read every 20 ms
while it runs.

Probes:

- ``alias-lint``: ``memdir lint`` on a store holding the 62-byte file whose header
  is ``metadata: &m {self: *m}`` (item 1);
- ``alias-serve``: ``memdir serve`` on that store, driven by the MCP SDK's client
  over stdio; one ``toc`` of the file, then the server's RSS and CPU time read
  from ``/proc`` at the answer and 5 s later (item 1);
- ``str-replace-memdir`` / ``str-replace-anthropic``: ``str_replace`` of ``a``
  (memdir's write set) and of an empty ``old_str`` (the anthropic profile) on a
  512 KiB file of ``a`` lines, with a second writer starting 0.2 s in (item 2);
- ``deep-tree``: ``memdir tree`` of a tree 1,000 folders deep made by hand, and
  ``deep-create``: ``create`` of a file 1,000 folders deep (item 6);
- ``trailing-space``: issue 19's sequence through the anthropic profile (create
  ``/memories/dir /x.txt``, create ``/memories/dir/y.txt``, delete
  ``/memories/dir /``): does ``dir/y.txt`` survive (item 8);
- ``modes``: the permission bits of a file and folder ``create`` makes under
  umask 022 (item 10).

Run: ``nice uv run --no-sync python benchmarks/hardening_store.py --before-src
/work/main/src``. Results go to ``benchmarks/results/hardening-store.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
HERE_SRC = Path(__file__).resolve().parents[1] / "src"
ADDRESS_SPACE = 2 << 30
BOMB = "---\nname: b\ndescription: d\nmetadata: &m {self: *m}\n---\n# H\nhi\n"
NORMAL = "---\nname: normal\ndescription: A normal note\n---\n# One\ntext\n"
BIG_HEADER = "---\nname: big\ndescription: Many lines\n---\n"

_STR_REPLACE = r"""
import asyncio, json, sys, threading, time
from pathlib import Path
from memdir.store import Store
root, profile = Path(sys.argv[1]), sys.argv[2]
store = Store(root)
if profile == "memdir":
    from memdir.tools import write_set
    tools, args = write_set(store), {"path": "/memories/big.md", "old_str": "a", "new_str": "b"}
else:
    from memdir.tools.anthropic import anthropic_set
    tools, args = anthropic_set(store), {"path": "/memories/big.md", "old_str": "", "new_str": "b"}
waited = {}
def second_writer():
    time.sleep(0.2)
    other = Store(root)
    started = time.monotonic()
    try:
        other.write("/memories/other.md", "---\nname: other\ndescription: d\n---\nx\n")
        waited["outcome"] = "wrote"
    except Exception as exc:
        waited["outcome"] = f"gave up: {str(exc)[:60]}"
    waited["seconds"] = time.monotonic() - started
thread = threading.Thread(target=second_writer)
thread.start()
started = time.monotonic()
result = asyncio.run(tools.call("str_replace", args))
took = time.monotonic() - started
thread.join()
print(json.dumps({"answer_s": round(took, 3), "second_writer_waited_s": round(waited["seconds"], 3),
                  "second_writer": waited["outcome"], "answer": result.content[:90]}))
"""

_DEEP_CREATE = r"""
import asyncio, json, sys
from pathlib import Path
from memdir.store import Store
from memdir.tools import write_set
store = Store(Path(sys.argv[1]))
path = "/memories/" + "d/" * 1000 + "n.md"
result = asyncio.run(write_set(store).call(
    "create", {"path": path, "file_text": "---\nname: n\ndescription: d\n---\n"}))
print(json.dumps({"refused": result.is_error, "answer": result.content[-120:]}))
"""

_TRAILING_SPACE = r"""
import json, sys
from pathlib import Path
from memdir.store import Store
from memdir.tools.anthropic import MemoryToolAdapter
store = Store(Path(sys.argv[1]))
adapter = MemoryToolAdapter(store)
answers = []
for command in [{"command": "create", "path": "/memories/dir /x.txt", "file_text": "spacey"},
                {"command": "create", "path": "/memories/dir/y.txt", "file_text": "plain"},
                {"command": "delete", "path": "/memories/dir /"}]:
    result = adapter.handle_sync({"type": "tool_use", "id": "t", "name": "memory",
                                  "input": command})
    answers.append(("error: " if result["is_error"] else "ok: ") + result["content"][:60])
print(json.dumps({"dir/y.txt survives": (store.root / "dir" / "y.txt").is_file(),
                  "answers": answers}))
"""

_MODES = r"""
import asyncio, json, os, stat, sys
from pathlib import Path
os.umask(0o022)
from memdir.store import Store
from memdir.tools import write_set
store = Store(Path(sys.argv[1]) / "memories", create=True)
asyncio.run(write_set(store).call("create", {
    "path": "/memories/people/alice.md", "file_text": "---\nname: alice\ndescription: d\n---\n"}))
mode = lambda p: oct(stat.S_IMODE(p.stat().st_mode))
print(json.dumps({"root": mode(store.root), "folder": mode(store.root / "people"),
                  "file": mode(store.root / "people" / "alice.md")}))
"""


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _run(argv: list[str], src: Path, wall: float) -> dict[str, Any]:
    """Run ``argv`` with ``src`` first on the path; its time, CPU, peak RSS and output."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, preexec_fn=_cap)
    killed = False
    peak = 0
    while True:
        peak = max(peak, _high_water(proc.pid))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > wall:
            proc.kill()
            killed = True
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    stdout = out.read().decode(errors="replace")
    stderr = err.read().decode(errors="replace")
    report: dict[str, Any] = {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mib": round(peak / 2**20, 1),
        "exit": "killed at the wall-clock cap" if killed else proc.returncode,
    }
    last = stdout.strip().splitlines()[-1:] if stdout.strip() else []
    try:
        report["saw"] = json.loads(last[0]) if last else None
    except json.JSONDecodeError:
        report["saw"] = last[0][-160:] if last else None
    if proc.returncode != 0 and not killed and stderr.strip():
        report["stderr"] = stderr.strip().splitlines()[-1][-160:]
    return report


def _high_water(pid: int) -> int:
    """The peak resident memory of the process ``pid`` so far (``VmHWM``; 0 once it is gone).

    Read from ``/proc`` while the probe runs: ``wait4``'s ``ru_maxrss`` would report
    at least this benchmark's own size, which a child inherits at ``fork``.
    """
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _store_with_bomb(where: Path) -> Path:
    root = where / "alias"
    root.mkdir()
    (root / "b.md").write_text(BOMB)
    (root / "normal.md").write_text(NORMAL)
    return root


def _big_store(where: Path) -> Path:
    root = where / "big"
    root.mkdir()
    (root / "big.md").write_text(BIG_HEADER + "a\n" * ((512 * 1024 - len(BIG_HEADER)) // 2))
    return root


def _deep_store(where: Path) -> Path:
    root = where / "deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(1000):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    note = os.open("n.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
    os.write(note, b"---\nname: n\ndescription: deep\n---\nbody\n")
    os.close(note)
    os.close(fd)
    return root


def _remove(root: Path) -> None:
    """Remove a tree of any depth (shutil.rmtree recurses)."""
    sys.path.insert(0, str(HERE_SRC))
    from memdir.store._paths import open_root, remove_at

    fd = open_root(root.parent)
    try:
        remove_at(fd, root.name)
    finally:
        os.close(fd)


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_pid(store: Path) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in argv and str(store).encode() in argv and b"prlimit" not in argv[0]:
                return int(entry.name)
    raise RuntimeError("no server process found")


async def _serve_probe(store: Path, src: Path) -> dict[str, Any]:
    import mcp_types as types
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command="prlimit",
        args=[f"--as={ADDRESS_SPACE}", "--", sys.executable, "-m", "memdir", "serve",
              str(store)],
        env={**os.environ, "PYTHONPATH": str(src), "MEMDIR_TOOL_TIME_LIMIT": "5"},
    )
    async with Client(params, read_timeout_seconds=120) as client:
        pid = _server_pid(store)
        for _ in range(3):
            await client.call_tool("toc", {"path": "/memories/normal.md"})
        baseline = _rss(pid)
        started = time.monotonic()
        result = await client.call_tool("toc", {"path": "/memories/b.md"})
        answered = time.monotonic() - started
        at_answer, cpu_at_answer = _rss(pid), _cpu(pid)
        await asyncio.sleep(5)
        later, cpu_later = _rss(pid), _cpu(pid)
        block = result.content[0]
        text = block.text if isinstance(block, types.TextContent) else ""
    return {
        "answer_s": round(answered, 2),
        "answer": ("error: " if result.is_error else "ok: ") + text[:70],
        "rss_mib_before_call": round(baseline / 2**20, 1),
        "rss_mib_at_answer": round(at_answer / 2**20, 1),
        "rss_mib_5s_later": round(later / 2**20, 1),
        "cpu_s_in_the_5s_after": round(cpu_later - cpu_at_answer, 2),
    }


def _probes(where: Path, wall: float) -> dict[str, Callable[[Path], dict[str, Any]]]:
    alias = _store_with_bomb(where)
    deep = _deep_store(where)
    py = sys.executable

    def fresh(make: Callable[[Path], Path], name: str) -> Callable[[], Path]:
        counter = iter(range(1000))

        def build() -> Path:
            folder = where / f"{name}-{next(counter)}"
            folder.mkdir()
            return make(folder)

        return build

    big = fresh(_big_store, "big")
    empty = fresh(lambda folder: folder, "empty")
    return {
        "alias-lint": lambda src: _run([py, "-m", "memdir", "lint", str(alias)], src, wall),
        "alias-serve": lambda src: asyncio.run(_serve_probe(alias, src)),
        "str-replace-memdir": lambda src: _run(
            [py, "-c", _STR_REPLACE, str(big()), "memdir"], src, wall),
        "str-replace-anthropic": lambda src: _run(
            [py, "-c", _STR_REPLACE, str(big()), "anthropic"], src, wall),
        "deep-tree": lambda src: _run([py, "-m", "memdir", "tree", str(deep)], src, wall),
        "deep-create": lambda src: _run([py, "-c", _DEEP_CREATE, str(empty())], src, wall),
        "trailing-space": lambda src: _run([py, "-c", _TRAILING_SPACE, str(empty())], src,
                                           wall),
        "modes": lambda src: _run([py, "-c", _MODES, str(empty())], src, wall),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before-src", type=Path, required=True,
                        help="the src/ folder of the code to compare with (e.g. main's)")
    parser.add_argument("--after-src", type=Path, default=HERE_SRC)
    parser.add_argument("--only", nargs="*", default=None, help="run only these probes")
    parser.add_argument("--wall", type=float, default=90.0,
                        help="seconds a probe may run before it is killed")
    args = parser.parse_args()
    if shutil.which("prlimit") is None:
        raise SystemExit("needs prlimit (util-linux) to cap the server's memory")
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="hardening-store-") as tmp:
        where = Path(tmp)
        try:
            probes = _probes(where, args.wall)
            for name, probe in probes.items():
                if args.only and name not in args.only:
                    continue
                results[name] = {}
                for side, src in (("before", args.before_src), ("after", args.after_src)):
                    results[name][side] = probe(src.resolve())
                    print(f"{name:<22} {side:<6} {json.dumps(results[name][side])}",
                          flush=True)
        finally:
            for child in where.iterdir():
                _remove(child)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "hardening-store.json"
    out.write_text(json.dumps({"before_src": str(args.before_src), "after_src":
                               str(args.after_src), "probes": results}, indent=2) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
