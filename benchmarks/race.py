"""Racing swapper: how many tool calls act outside the store while a folder is swapped for a link.

A separate process swaps the store folder ``people`` for a symbolic link to a
host folder (and back) as fast as it can, while tool calls run against paths
inside ``people``: every tool of the write and read sets (``--surface memdir``),
or every command of the Anthropic memory tool profile (``--surface anthropic``,
the default for ``memory_20250818`` blocks). An *escape* is any call whose
result shows the host folder's secret, or after which the host folder changed
(a file created, edited, moved or deleted there). The baseline is the same
count for the code at another source tree (``--baseline-src``, e.g. the
worktree of an older commit), measured in the same run in a subprocess.

Run: ``.venv/bin/python benchmarks/race.py [--surface anthropic] [--attempts 10000]
[--baseline-src ../wt-old/src]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _baseline import add_baseline_options, measure_baseline

SECRET = "HOSTSECRET-7d1f"
DOC = "---\nname: {name}\ndescription: {name}\n---\n# Notes\n{body}\n"


_SWAPPER = """
import os, sys, time
people, host = sys.argv[1], sys.argv[2]
aside = people + "-aside"
while True:
    try:
        os.rename(people, aside)
        os.symlink(host, people)
        time.sleep(0.0003)
        os.unlink(people)
        os.rename(aside, people)
        time.sleep(0.0003)
    except OSError:
        pass
"""


def _host_state(folder: Path) -> dict[str, bytes | None]:
    state: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            state[os.path.join(dirpath, name)] = None
        for name in filenames:
            state[os.path.join(dirpath, name)] = Path(dirpath, name).read_bytes()
    return state


def _calls(i: int) -> list[tuple[str, dict[str, object]]]:
    return [
        ("view", {"path": "/memories/people/alice.md"}),
        ("view", {"path": "/memories/people"}),
        ("create", {"path": f"/memories/people/new-{i}.md",
                    "file_text": DOC.format(name=f"new-{i}", body="x")}),
        ("str_replace", {"path": "/memories/people/alice.md", "old_str": "body",
                         "new_str": "body"}),
        ("insert", {"path": "/memories/people/alice.md", "insert_line": 5, "insert_text": "y"}),
        ("delete", {"path": f"/memories/people/new-{i}.md"}),
        ("delete", {"path": "/memories/people/sub"}),
        ("rename", {"old_path": "/memories/people/sub", "new_path": "/memories/moved-sub"}),
        ("rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/bob.md"}),
        ("grep", {"pattern": "HOSTSECRET", "path": "/memories/people"}),
        ("toc", {"path": "/memories/people/alice.md"}),
    ]


def _anthropic_calls(i: int) -> list[tuple[str, dict[str, object]]]:
    return [
        ("view", {"path": "/memories/people/alice.md"}),
        ("view", {"path": "/memories/people"}),
        ("create", {"path": f"/memories/people/new-{i}.txt", "file_text": "x"}),
        ("str_replace", {"path": "/memories/people/alice.md", "old_str": "# Notes",
                         "new_str": "# Notes"}),
        ("insert", {"path": "/memories/people/alice.md", "insert_line": 5, "insert_text": "y"}),
        ("delete", {"path": f"/memories/people/new-{i}.txt"}),
        ("create", {"path": f"/memories/people/sub/deep/x-{i}", "file_text": "x"}),
        ("rename", {"old_path": "/memories/people/sub", "new_path": "/memories/moved-sub"}),
        ("rename", {"old_path": "/memories/moved-sub", "new_path": "/memories/people/sub"}),
        ("delete", {"path": "/memories/people/sub"}),
        ("rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/bob.txt"}),
        ("rename", {"old_path": "/memories/bob.txt", "new_path": "/memories/people/bob.md"}),
    ]


Calls = Callable[[int], list[tuple[str, dict[str, object]]]]


def _surface(store: object, surface: str) -> tuple[dict[str, Callable[..., Awaitable[object]]],
                                                   Calls]:
    """The callables of a surface by name, and the calls of one attempt."""
    from memdir.store import Store
    from memdir.tools._memory import read_set, write_set

    assert isinstance(store, Store)
    if surface == "anthropic":
        from memdir.tools._anthropic_profile import AnthropicMemoryCommands

        commands = AnthropicMemoryCommands(store)
        return {name: getattr(commands, name) for name, _ in _anthropic_calls(0)}, _anthropic_calls
    specs = {**write_set(store).tools, **read_set(store).tools}
    return {name: specs[name].fn for name, _ in _calls(0)}, _calls


def run(attempts: int, surface: str = "memdir") -> dict[str, dict[str, int]]:
    """Run ``attempts`` rounds of calls; return attempts and escapes per tool."""
    from memdir.store import Store

    with tempfile.TemporaryDirectory(prefix="memdir-race-") as tmp:
        base = Path(tmp)
        host = base / "host"
        (host / "sub").mkdir(parents=True)
        for name in ("alice", "bob", "sub/x"):
            (host / f"{name}.md").write_text(DOC.format(name=name.split("/")[-1], body=SECRET))
        store = Store(base / "store", create=True)
        people = store.root / "people"
        tools, calls = _surface(store, surface)
        counts = {name: {"attempts": 0, "escapes": 0} for name, _ in calls(0)}

        def settle() -> None:
            # The swapper is stopped; undo a swap it may be in the middle of.
            aside = store.root / "people-aside"
            if people.is_symlink():
                people.unlink()
            if aside.is_dir() and not people.exists():
                aside.rename(people)

        def reset() -> None:
            (people / "sub").mkdir(parents=True, exist_ok=True)
            for name in ("alice", "bob", "sub/x"):
                target = people / f"{name}.md"
                if name == "alice" or not target.exists():  # alice: undo the inserts
                    target.write_text(DOC.format(name=name.split("/")[-1], body="body"))


        async def attack() -> None:
            expected = _host_state(host)
            for i in range(attempts):
                for name, args in calls(i):
                    counts[name]["attempts"] += 1
                    try:
                        result = await tools[name](**args)
                        text = str(result)
                    except Exception as exc:  # noqa: BLE001 - every failure is counted as text
                        text = str(exc)
                    now = _host_state(host)
                    if SECRET in text or now != expected:
                        counts[name]["escapes"] += 1
                        _restore_host(host, expected)
                if i % 20 == 0:
                    _stop(swapper)
                    try:
                        settle()
                        reset()
                    finally:
                        swapper.send_signal(signal.SIGCONT)

        # A separate process, so the swaps really run in parallel with the tools.
        reset()
        swapper = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(people), str(host)])
        try:
            asyncio.run(attack())
        finally:
            swapper.kill()
            swapper.wait()
    return counts


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGSTOP ``proc`` and wait until it is stopped: the signal is delivered later, and a
    swap it makes meanwhile raced the harness's own clean-up (an OSError out of rename)."""
    proc.send_signal(signal.SIGSTOP)
    stat = Path(f"/proc/{proc.pid}/stat")
    for _ in range(1000):
        if stat.read_text().rsplit(")", 1)[1].split()[0] in ("T", "t"):
            return
        time.sleep(0.001)


def _restore_host(host: Path, expected: dict[str, bytes | None]) -> None:
    import shutil

    shutil.rmtree(host, ignore_errors=True)
    for path, data in sorted(expected.items()):
        if data is None:
            Path(path).mkdir(parents=True, exist_ok=True)
        else:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--surface", choices=["memdir", "anthropic"], default="memdir",
                        help="the write and read tool sets, or the Anthropic memory tool profile")
    add_baseline_options(parser)
    args = parser.parse_args()
    counts = run(args.attempts, args.surface)
    if args.json:
        print(json.dumps(counts))
        return
    baseline = measure_baseline(__file__, args.baseline_src,
                                ["--attempts", str(args.attempts), "--surface", args.surface])
    print(f"{'tool call':<14}{'attempts':>10}{'escapes':>10}" + (
        f"{'baseline escapes':>18}" if baseline else ""))
    for name, count in counts.items():
        row = f"{name:<14}{count['attempts']:>10}{count['escapes']:>10}"
        if baseline:
            row += f"{baseline[name]['escapes']:>18}"
        print(row)
    total = sum(c["escapes"] for c in counts.values())
    line = f"total escapes: {total}"
    if baseline:
        line += f" (baseline {sum(c['escapes'] for c in baseline.values())})"
    print(line)


if __name__ == "__main__":
    main()
