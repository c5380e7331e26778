"""The shell against attacks on the host: fork bombs, path leaks, planted git state, lock hogs.

Each test runs once per confinement that works here (bubblewrap, unshare). The
process cap is checked both ways the kernel can enforce it: as root through a
pids cgroup, and as an ordinary user through RLIMIT_NPROC in the sandbox's user
namespace (a child process dropped to ``nobody`` runs the tool there).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.store.history import History
from memdir.tools._pids import MAX_PROCESSES, pids_parent, process_cap
from memdir.tools._sandbox import Backend
from memdir.tools._shell import shell_set, shell_spec

FORK_BOMB = ":(){ :|:& };:; sleep 10"  # the classic, kept alive past the time limit
SPAWN_400 = "for i in $(seq 400); do sleep 20 & done 2>/dev/null; wait"
NOBODY = 65534


def _descendants(root_pid: int) -> int:
    """How many live processes descend from ``root_pid`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    count, todo = 0, list(children.get(root_pid, []))
    while todo:
        pid = todo.pop()
        count += 1
        todo += children.get(pid, [])
    return count


@contextmanager
def _peak_descendants(root_pid: int) -> Iterator[list[int]]:
    """Sample the descendants of ``root_pid`` every 20 ms; yields [peak] (filled at exit)."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _descendants(root_pid))
            time.sleep(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        done.set()
        thread.join()


def _leftover_groups() -> list[Path]:
    parent = pids_parent(Path("/proc/self/mountinfo").read_text(),
                         Path("/proc/self/cgroup").read_text())
    return [] if parent is None else list(parent.glob(f"memdir-shell-{os.getpid()}-*"))


@pytest.mark.parametrize("command", [FORK_BOMB, SPAWN_400], ids=["fork-bomb", "spawn-400"])
async def test_a_command_cannot_start_more_than_the_process_cap(
        backend: Backend, store: Store, command: str) -> None:
    tools = shell_set(store, timeout=3.0, backend=backend)
    # Processes this test run already has (a browser a browse test's fixture keeps
    # for the session) are not the command's.
    before = _descendants(os.getpid())
    with _peak_descendants(os.getpid()) as peak:
        result = await tools.call("bash", {"command": command})
    started = peak[0] - before
    assert "[stopped: the command ran past the 3 s time limit" in result.content
    # The sandbox's own helpers (bwrap's outer process, unshare) come on top of the cap.
    assert started <= MAX_PROCESSES + 3, f"{started} processes ran at once"
    # the command did try: a fork bomb's processes come and go, sleeps stay and fill the cap
    assert started >= (64 if command == FORK_BOMB else MAX_PROCESSES - 10)
    assert _descendants(os.getpid()) == before  # everything it started is gone
    assert _leftover_groups() == []


_AS_NOBODY = """
import asyncio, json, os, sys, threading, time
sys.path[:0] = [sys.argv[3]]
from test_shell_hardening import _descendants
from memdir.store import Store
from memdir.tools._pids import process_cap
from memdir.tools._shell import shell_set, shell_spec
tools = shell_set(Store(sys.argv[1]), timeout=3.0, backend=sys.argv[2])
peak = [0]
def sample():
    while True:
        peak[0] = max(peak[0], _descendants(os.getpid()))
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
result = asyncio.run(tools.call("bash", {"command": sys.argv[4]}))
time.sleep(0.1)
print(json.dumps({"uid": os.getuid(), "cap": process_cap(True), "peak": peak[0],
                  "left": _descendants(os.getpid()), "out": result.content[-300:]}))
"""


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None,
                    reason="dropping to nobody needs root and setpriv")
async def test_as_an_ordinary_user_rlimit_nproc_holds_the_cap(backend: Backend) -> None:
    folder = Path(tempfile.mkdtemp(prefix="memdir-nobody-"))
    try:
        folder.chmod(0o755)
        root = folder / "memories"
        root.mkdir()
        os.chown(root, NOBODY, NOBODY)
        done = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             sys.executable, "-c", _AS_NOBODY, str(root), backend, str(Path(__file__).parent),
             FORK_BOMB],
            capture_output=True, text=True, timeout=120, cwd=folder,
            env={"PATH": os.environ["PATH"], "HOME": str(folder)})
        assert done.returncode == 0, done.stderr[-2000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["uid"] == NOBODY and report["cap"] == "rlimit"
        assert "time limit" in report["out"]
        assert 64 <= report["peak"] <= MAX_PROCESSES + 3, report
        assert report["left"] == 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_cap_here_is_the_one_the_kernel_enforces() -> None:
    expected = "rlimit" if os.getuid() != 0 else "cgroup"
    assert process_cap(True) == expected


def test_pids_parent_finds_v1_and_v2_hierarchies(tmp_path: Path) -> None:
    v1 = ("30 25 0:27 / /sys/fs/cgroup/pids rw,relatime shared:9 - cgroup cgroup rw,pids\n"
          "31 25 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n")
    assert pids_parent(v1, "8:pids:/job/7\n1:cpu:/\n") == Path("/sys/fs/cgroup/pids/job/7")
    assert pids_parent(v1, "1:cpu:/\n") is None  # no pids hierarchy for this process
    # v2: the mount is tmp_path; the process sits in /app.slice/run.scope
    (tmp_path / "app.slice" / "run.scope").mkdir(parents=True)
    (tmp_path / "app.slice" / "cgroup.subtree_control").write_text("cpu pids\n")
    v2 = f"40 25 0:30 / {tmp_path} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    assert pids_parent(v2, "0::/app.slice/run.scope\n") == tmp_path / "app.slice"
    (tmp_path / "app.slice" / "cgroup.subtree_control").write_text("cpu\n")
    assert pids_parent(v2, "0::/app.slice/run.scope\n") is None  # pids not handed down


_PROBE = ("for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do tr '\\0' ' ' < $f; "
          "echo; done; env; ls -l /proc/[0-9]*/cwd /proc/[0-9]*/fd/ 2>&1; "
          "cat /memories/nope.md; cd /nowhere")


async def test_nothing_inside_names_the_store_on_the_host(backend: Backend,
                                                          store: Store) -> None:
    for read_only in (False, True):
        tools = shell_set(store, timeout=5.0, backend=backend, read_only=read_only)
        out = (await tools.call("bash", {"command": _PROBE})).content
        assert "No such file or directory" in out and "/memories" in out
        # neither the full path nor the folders above the store
        assert str(store.root) not in out, out
        assert str(store.root.parent) not in out, out


_PLANT = ("git init -q /memories && printf '[core]\\n\\tfsmonitor = \"echo ran > "
          "../fsmonitor-ran; false\"\\n' >> /memories/.git/config && echo planted && sleep 30")


async def test_a_git_repository_planted_by_a_cancelled_command_is_removed(
        backend: Backend, tmp_path: Path) -> None:
    store = Store(tmp_path / "memories", create=True)
    store.write("/memories/a.md", "---\nname: a\ndescription: A\n---\nA.\n")
    # The tool's coroutine itself, run on this loop, so cancelling reaches it (a ToolSet
    # call runs it on a worker thread, where the command runs on to its own limit).
    bash = shell_spec(store, timeout=20.0, backend=backend).fn
    call = asyncio.ensure_future(bash(command=_PLANT))
    deadline = time.monotonic() + 15
    while not (store.root / ".git" / "config").is_file() or "fsmonitor" not in (
            store.root / ".git" / "config").read_text():
        assert time.monotonic() < deadline, "the command never planted its repository"
        await asyncio.sleep(0.05)
    call.cancel()  # the caller gives up (a timeout, Ctrl-C) while the command runs
    with pytest.raises(asyncio.CancelledError):
        await call
    assert not (store.root / ".git").exists()
    # memdir's own git calls then make a fresh repository; the planted hook never runs
    history = History(store)
    history.snapshot("after the shell")
    assert not (tmp_path / "fsmonitor-ran").exists()
    assert history.read_state(-1) == {"/memories/a.md": store.read("/memories/a.md")}


async def test_a_read_only_command_does_not_hold_writers_off(backend: Backend,
                                                             store: Store) -> None:
    store.write("/memories/a.md", "---\nname: a\ndescription: A\n---\nold\n")
    tools = shell_set(store, timeout=20.0, backend=backend, read_only=True)
    # The command waits for a change that a writer in another process makes meanwhile.
    wait = ("for i in $(seq 150); do grep -q new /memories/a.md && echo seen && exit 0; "
            "sleep 0.1; done; echo never")
    call = asyncio.ensure_future(tools.call("bash", {"command": wait}))
    await asyncio.sleep(0.5)
    writer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import sys; from memdir.store import Store; "
        "Store(sys.argv[1], lock_timeout=30).write('/memories/a.md', "
        "'---\\nname: a\\ndescription: A\\n---\\nnew\\n')", str(store.root))
    result = await call
    assert await writer.wait() == 0
    assert result.content.startswith("seen"), result.content


_UNDER_A_TIGHT_ULIMIT = """
import asyncio, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # ulimit -v of a container
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
from memdir.store import Store
from memdir.tools._shell import shell_set
tools = shell_set(Store(sys.argv[1], create=True), timeout=10.0, backend=sys.argv[2])
result = asyncio.run(tools.call("bash", {"command": "echo hi; ulimit -v; ulimit -f"}))
print(json.dumps({"error": result.is_error, "out": result.content}))
"""


def test_a_tighter_limit_of_the_caller_is_kept_not_raised(backend: Backend,
                                                          tmp_path: Path) -> None:
    # The shell asks for a 4 GiB address space and 64 MiB files; a caller already held
    # to less cannot raise its hard limits, and every command then failed in preexec_fn.
    done = subprocess.run([sys.executable, "-c", _UNDER_A_TIGHT_ULIMIT,
                           str(tmp_path / "memories"), backend],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert not report["error"], report
    assert report["out"].split()[:3] == ["hi", str(2 << 20), "1024"], report
