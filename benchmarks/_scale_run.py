"""How the scale benchmark measures: whole commands, and requests to running servers.

A command runs as a new process in its own session, its output discarded, with a
time limit (the whole process group is killed past it) and an address-space
limit (so a runaway allocation fails inside the command instead of taking the
shared machine's memory). Its peak resident memory is the kernel's own count
(``wait4``'s ``ru_maxrss``, which includes the children it waited for).

A server (``memdir serve --transport http`` or ``memdir browse``) runs as a
process of the version under test; requests are timed from this process, and the
server's peak resident memory is read from ``/proc/PID/status`` (``VmHWM``).
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["BrowseServer", "McpServer", "Timing", "best_of", "cpu_seconds", "free_port",
           "run_once", "time_calls"]


@dataclass
class Timing:
    """One row's measurement at one store size.

    Attributes:
        seconds: The best (commands) or median warm (server requests) time; None on failure.
        peak_mb: Peak resident memory of the process (the server's, for requests).
        runs: How many runs the time is the best or median of.
        cold: The first request's seconds (server rows only).
        size: Bytes of the answer (server rows only).
        error: Why there is no time (a timeout, a non-zero exit, a failed request).
        cpu: CPU seconds (user plus system): for commands, of the run whose time is
            kept; for server rows, the server's own per warm request (from /proc). On a
            loaded machine wall time waits for a core, CPU time much less.
    """

    seconds: float | None
    peak_mb: float | None = None
    runs: int = 0
    cold: float | None = None
    size: int | None = None
    error: str | None = None
    cpu: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A plain mapping for JSON."""
        return {k: v for k, v in asdict(self).items() if v is not None}


def _limit(mem_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    return apply


def run_once(argv: Sequence[str], env: dict[str, str], *, timeout: float, mem_gb: float,
             ok: Sequence[int] = (0,), cwd: Path | None = None) -> Timing:
    """Run ``argv`` once: its seconds and peak memory, or why it failed."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                preexec_fn=_limit(int(mem_gb * 2**30)))
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        peak = usage.ru_maxrss / 1024
        cpu = usage.ru_utime + usage.ru_stime
        if killed.is_set():
            return Timing(None, peak, 1, error=f"timeout after {timeout:.0f} s", cpu=cpu)
        if proc.returncode not in ok:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace").strip().splitlines()[-3:]
            why = " | ".join(tail)[-300:]
            return Timing(None, peak, 1, error=f"exit {proc.returncode}: {why}")
        return Timing(elapsed, peak, 1, cpu=cpu)


def best_of(argv: Sequence[str], env: dict[str, str], runs: int, *, timeout: float,
            mem_gb: float, ok: Sequence[int] = (0,), before: Callable[[], None] | None = None,
            slow: float = 20.0) -> Timing:
    """The fastest of ``runs`` runs (one run when the first takes over ``slow`` seconds)."""
    best: Timing | None = None
    for k in range(runs):
        if before is not None:
            before()
        got = run_once(argv, env, timeout=timeout, mem_gb=mem_gb, ok=ok)
        if got.seconds is None:
            return got
        if best is None or got.seconds < (best.seconds or float("inf")):
            peak = max(got.peak_mb or 0, best.peak_mb or 0) if best else got.peak_mb
            best = Timing(got.seconds, peak, k + 1, cpu=got.cpu)
        else:
            best.peak_mb = max(best.peak_mb or 0, got.peak_mb or 0)
        best.runs = k + 1
        if got.seconds > slow:
            break
    assert best is not None
    return best


def free_port() -> int:
    """A TCP port free on the loopback address."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds a process has used so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class _Server:
    """A memdir server process of one version, stopped by :meth:`stop`."""

    def __init__(self, argv: list[str], env: dict[str, str], port: int, mem_gb: float) -> None:
        self.port = port
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, start_new_session=True,
                                     preexec_fn=_limit(int(mem_gb * 2**30)))
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {self.output()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("the server did not listen within 120 s") from None
                time.sleep(0.1)

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-500:]

    @property
    def peak_mb(self) -> float | None:
        """The server's peak resident memory so far."""
        return _peak_mb(self.proc.pid)

    @property
    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.proc.poll() is None

    def stop(self) -> None:
        """Kill the server's process group and reap it."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.log.close()


def time_calls(call: Callable[[], int], repeat: int, peak: Callable[[], float | None],
               timeout: float) -> Timing:
    """Cold (first) and median warm seconds of ``call`` (which returns the answer's size)."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            start = time.perf_counter()
            result["size"] = call()
            result["cold"] = time.perf_counter() - start
            warm = []
            for _ in range(repeat):
                start = time.perf_counter()
                call()
                warm.append(time.perf_counter() - start)
                if warm[-1] > 20:
                    break
            result["warm"] = statistics.median(warm) if warm else result["cold"]
            result["runs"] = len(warm)
        except Exception as exc:  # noqa: BLE001 - reported in the row, never hidden
            result["error"] = f"{type(exc).__name__}: {exc}"[:300]

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return Timing(None, peak(), 0, error=f"timeout after {timeout:.0f} s")
    if "error" in result:
        return Timing(None, peak(), 0, error=result["error"])
    return Timing(result["warm"], peak(), result["runs"], cold=result["cold"],
                  size=result["size"])


class BrowseServer(_Server):
    """``memdir browse STORE`` on a free loopback port, with a client holding its token."""

    def __init__(self, python: str, store: Path, env: dict[str, str], mem_gb: float) -> None:
        import httpx

        port = free_port()
        super().__init__([python, "-m", "memdir", "browse", str(store), "--port", str(port)],
                         env, port, mem_gb)
        token = self._token()
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=None,
                                   headers={"Authorization": f"Bearer {token}"})

    def _token(self) -> str:
        """The session's token, from the URL browse prints (``/TOKEN/`` now, ``?token=`` before)."""
        import re

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(r"open http://[^/\s]+/(?:\?token=)?([A-Za-z0-9_-]{16,})",
                              self.output())
            if found:
                return found.group(1)
            time.sleep(0.1)
        raise RuntimeError(f"browse printed no URL with a token: {self.output()}")

    def get(self, path: str) -> int:
        """Bytes of the page at ``path`` (an error unless HTTP 200)."""
        response = self.client.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
        return len(response.content)

    def stop(self) -> None:
        """Close the client and kill the server."""
        self.client.close()
        super().stop()


class McpServer(_Server):
    """``memdir serve STORE --transport http``; tool calls through the MCP SDK's own client.

    ``flags`` go to ``memdir serve`` too (e.g. ``["--set", "bm25"]``); a ``launcher``
    (an argument list to which the port is appended) starts another server command.
    """

    def __init__(self, python: str, store: Path, env: dict[str, str], mem_gb: float,
                 flags: Sequence[str] = (), launcher: Sequence[str] | None = None) -> None:
        port = free_port()
        env = {**env, "MEMDIR_MCP_TOKEN": "scale-bench-token"}
        argv = [*launcher, str(port)] if launcher is not None else [
            python, "-m", "memdir", "serve", str(store), "--transport", "http", "--port",
            str(port), *flags]
        super().__init__(argv, env, port, mem_gb)
        self.url = f"http://127.0.0.1:{port}/mcp"

    def calls(self, calls: list[tuple[str, dict[str, Any]]], repeat: int, timeout: float
              ) -> list[Timing]:
        """Each call's cold and median warm seconds, all in one MCP session."""
        return asyncio.run(self._calls(calls, repeat, timeout))

    async def _calls(self, calls: list[tuple[str, dict[str, Any]]], repeat: int,
                     timeout: float) -> list[Timing]:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        out: list[Timing] = []
        headers = {"Authorization": "Bearer scale-bench-token"}
        async with httpx2.AsyncClient(timeout=timeout, headers=headers) as http:
            async with Client(streamable_http_client(self.url, http_client=http)) as client:
                for name, args in calls:
                    out.append(await self._one(client, name, args, repeat, timeout))
        return out

    async def _one(self, client: Any, name: str, args: dict[str, Any], repeat: int,
                   timeout: float) -> Timing:
        times: list[float] = []
        size = 0
        cpu_before = None
        try:
            for k in range(repeat + 1):
                if k == 1:
                    cpu_before = cpu_seconds(self.proc.pid)
                start = time.perf_counter()
                result = await asyncio.wait_for(client.call_tool(name, args), timeout)
                times.append(time.perf_counter() - start)
                if result.is_error:
                    raise RuntimeError(str(result.content[0])[:200])
                size = sum(len(getattr(b, "text", "")) for b in result.content)
        except Exception as exc:  # noqa: BLE001 - reported in the row
            return Timing(None, self.peak_mb, len(times), error=f"{type(exc).__name__}: {exc}")
        cpu_after = cpu_seconds(self.proc.pid)
        cpu = (cpu_after - cpu_before) / repeat if cpu_before is not None and cpu_after \
            is not None and repeat else None
        return Timing(statistics.median(times[1:]), self.peak_mb, repeat, cold=times[0], cpu=cpu,
                      size=size)
