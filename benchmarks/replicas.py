"""Many replicas, one memory: a simulation that proves nothing written is lost.

A bare remote sits behind ``git daemon`` on 127.0.0.1; ``--replicas`` worker
processes each clone it and run a scripted agent that makes random tool calls
through the write set (creates, inserts into and line replacements of any file,
shared ones included, renames, deletes, reads) and syncs at random intervals. In
the partition run the daemon is stopped for a stretch of the run and started
again. Then the agents stop writing, reconcile every conflict they are shown
(with an ordinary ``str_replace`` that keeps every line of both versions), and
sync until all replicas are quiet.

Every write carries a unique token. A token is *lost* when the tool reported the
write done, no later tool call removed it on purpose (a replaced line, a deleted
file the agent had read), and it is nowhere in the final store. It must be 0.

The baseline is plain git, measured in the same processes at the same moments:
each worker also keeps a plain clone of a second bare repository on the same
daemon, applies the same change there, and at each sync runs ``git add -A &&
git commit`` then ``git pull --no-rebase && git push`` (git's built-in union
merge, so a pull never stops). Sync cost per change is the time spent syncing
divided by the changes the syncs carried, for memdir and for git.

The two syncs of a worker run back to back, and the one that goes second starts
where the first one's lost push races have already spread the workers out in
time: it loses far fewer races of its own (runs of the same code, memdir's sync
first: git lost 23 races to memdir's 70; git's first: git 45, memdir 32). So by
default they take turns going first (``--order alternate``: each worker switches
at every sync, half of them starting with git), and each side gets the same
share of both positions; ``--order memdir-first`` is how earlier sessions ran it.

Run: ``nice .venv/bin/python benchmarks/replicas.py [--replicas 8] [--seconds 45]
[--out /work/scratch/replicas/sim]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "b@b", "GIT_TERMINAL_PROMPT": "0",
}
ORDERS = ("alternate", "memdir-first", "git-first")
TOKEN = re.compile(r"\bw-r\d+-\d+\b")
SHARED = [f"/memories/{folder}/{name}.md" for folder, names in (
    ("people", ("alice", "bob", "carol", "dan")), ("projects", ("atlas", "borealis", "comet")),
    ("notes", ("inbox", "ideas", "reading", "travel", "food"))) for name in names]


def _git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(["git", *args], cwd=cwd, env={**env, **GIT_ENV}, text=True,
                          capture_output=True, check=False, timeout=120)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done


def _doc(path: str, lines: list[str]) -> str:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return f"---\nname: {stem}\ndescription: notes on {stem}\n---\n# {stem}\n\n" + \
        "".join(f"{line}\n" for line in lines)


# -- the daemon --------------------------------------------------------------------------


class Daemon:
    """``git daemon`` on 127.0.0.1 serving a folder, pushes enabled."""

    def __init__(self, base: Path) -> None:
        self.base = base
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
             "--listen=127.0.0.1", f"--port={self.port}", f"--base-path={self.base}",
             str(self.base)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("git daemon did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None


# -- one worker: a scripted agent on one replica ----------------------------------------------


@dataclass
class Tally:
    """What one worker did, written as JSON for the main process."""

    name: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    writes: int = 0
    failed_calls: int = 0
    raised: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    memdir_seconds: float = 0.0
    memdir_changes: int = 0
    memdir_syncs: int = 0
    memdir_offline: int = 0
    memdir_races: int = 0
    memdir_waited: float = 0.0
    offline: list[str] = field(default_factory=list)
    git_seconds: float = 0.0
    git_changes: int = 0
    git_syncs: int = 0
    git_failed: int = 0
    git_races: int = 0
    quiesce_syncs: int = 0


class Agent:
    """Random tool calls on one replica, the same changes on a plain git clone."""

    def __init__(self, index: int, run: Path, url: str, plain_url: str, seed: int,
                 order: str = "alternate") -> None:
        from memdir.store.replica import Replica
        from memdir.tools import make_toolset

        self.name = f"r{index}"
        self.rng = random.Random(seed * 1000 + index)
        self.order = order
        self.turn = index % 2
        """When the two syncs take turns going first: whose turn it is (0: memdir's)."""
        self.run = run
        self.replica, _ = Replica.clone(url, run / self.name, name=self.name, timeout=15)
        self.tools = make_toolset("write", self.replica.store)
        self.plain = run / f"plain-{self.name}"
        _git("clone", "-q", plain_url, str(self.plain), cwd=run)
        (self.plain / ".git" / "info" / "attributes").write_text("* merge=union\n")
        self.tally = Tally(self.name)
        self.count = 0
        self.pending_memdir = 0
        self.pending_git = 0
        self.working = True
        """While writing, both syncs run at the same moments and their cost is counted."""

    async def call(self, tool: str, **args: Any) -> tuple[bool, str]:
        result = await self.tools.call(tool, args)
        if result.is_error:
            self.tally.failed_calls += 1
        return not result.is_error, result.content

    def token(self) -> str:
        self.count += 1
        return f"w-{self.name}-{self.count}"

    def files(self) -> list[str]:
        return self.replica.store.files()

    def plain_path(self, virtual: str) -> Path:
        return self.plain / virtual.removeprefix("/memories/")

    def _done(self, token: str | None, removed: list[str]) -> None:
        self.tally.writes += 1
        if token:
            self.tally.added.append(token)
        self.tally.removed.extend(removed)
        self.pending_memdir += 1
        self.pending_git += 1

    async def step(self) -> None:
        """One random tool call (and the same change on the plain clone)."""
        files = self.files()
        roll = self.rng.random()
        if not files or roll < 0.15:
            await self._create()
        elif roll < 0.55:
            await self._insert(self.rng.choice(files))
        elif roll < 0.75:
            await self._replace(self.rng.choice(files))
        elif roll < 0.85:
            await self._rename(self.rng.choice(files))
        elif roll < 0.90 and len(files) > 10:
            await self._delete(self.rng.choice(files))
        else:
            ok, text = await self.call("view", path=self.rng.choice(files))
            if ok and "Sync conflict" in text:
                await self.resolve_all()

    async def _create(self) -> None:
        token = self.token()
        folder = self.rng.choice(["people", "projects", "notes", f"own-{self.name}"])
        path = f"/memories/{folder}/{token}.md"
        ok, _ = await self.call("create", path=path, file_text=_doc(path, [f"- note {token}"]))
        if ok:
            self._done(token, [])
            target = self.plain_path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_doc(path, [f"- note {token}"]))

    async def _insert(self, path: str) -> None:
        token = self.token()
        lines = self.replica.store.read(path).count("\n")
        at = self.rng.randint(5, max(5, lines)) if lines >= 5 else lines
        ok, _ = await self.call("insert", path=path, insert_line=at,
                                insert_text=f"- note {token}")
        if ok:
            self._done(token, [])
            target = self.plain_path(path)
            if target.is_file():
                plain = target.read_text().split("\n")
                plain.insert(min(at, len(plain)), f"- note {token}")
                target.write_text("\n".join(plain))

    async def _replace(self, path: str) -> None:
        text = self.replica.store.read(path)
        notes = [ln for ln in text.split("\n") if ln.startswith("- note ")]
        if not notes or text.count(notes[0]) != 1:
            return await self._insert(path)
        old = self.rng.choice([n for n in notes if text.count(n) == 1] or notes)
        token = self.token()
        new = f"- note {token} (replaces {len(old)} chars)"
        ok, _ = await self.call("str_replace", path=path, old_str=old, new_str=new)
        if ok:
            self._done(token, TOKEN.findall(old))
            target = self.plain_path(path)
            if target.is_file() and old in target.read_text():
                target.write_text(target.read_text().replace(old, new, 1))

    async def _rename(self, path: str) -> None:
        token = self.token()
        folder = self.rng.choice(["people", "projects", "notes", "archive"])
        new = f"/memories/{folder}/moved-{token}.md"
        ok, _ = await self.call("rename", old_path=path, new_path=new)
        if ok:
            self._done(None, [])
            source, target = self.plain_path(path), self.plain_path(new)
            if source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                source.rename(target)

    async def _delete(self, path: str) -> None:
        seen = TOKEN.findall(self.replica.store.read(path))
        ok, _ = await self.call("delete", path=path)
        if ok:
            self._done(None, seen)
            target = self.plain_path(path)
            if target.is_file():
                target.unlink()

    async def resolve_all(self) -> int:
        """Reconcile every conflict block shown, keeping every line of every version."""
        from memdir.store import conflicted_paths, find_blocks
        from memdir.store._conflicts import MARKER

        resolved = 0
        for path in sorted(conflicted_paths(self.replica.root)):
            for _ in range(50):  # one block at a time, reading the file afresh each time
                text = self.replica.store.read(path)
                blocks = find_blocks(text)
                if not blocks:
                    break
                block = blocks[0]
                old = "\n".join(text.split("\n")[block.first - 1 : block.last])
                if "header field" in block.what:
                    kept: list[str] = []  # the header holds the first version already
                else:
                    # Every content line of every version, once; the frame lines of any
                    # block nested inside (from an older conflict) go too.
                    kept = list(dict.fromkeys(
                        ln for _, body in block.versions for ln in body.split("\n")
                        if ln and not ln.startswith(MARKER)))
                new = "\n".join(kept)
                ok, _ = await self.call("str_replace", path=path, old_str=old, new_str=new)
                if not ok:
                    break
                resolved += 1
                self.tally.resolved.append(block.id)
                self._done(None, sorted(set(TOKEN.findall(old)) - set(TOKEN.findall(new))))
        return resolved

    def git_first(self) -> bool:
        """Whether plain git's sync runs before memdir's this time (see ``--order``)."""
        if self.order == "alternate":
            self.turn ^= 1
            return self.turn == 0
        return self.order == "git-first"

    def sync_memdir(self) -> Any:
        started = time.perf_counter()
        try:
            report = self.replica.sync(writers=[f"agent-{self.name}"])
        except Exception as exc:  # a sync error is counted, the agent goes on
            print(f"{self.name}: sync error: {exc}", file=sys.stderr)
            report = None
        if not self.working:
            self.tally.quiesce_syncs += 1
        else:
            self.tally.memdir_seconds += time.perf_counter() - started
            self.tally.memdir_syncs += 1
        if report is None or not report.ok:
            self.tally.memdir_offline += 1
            if report is not None and report.offline:
                self.tally.offline.append(f"{report.offline} ({report.seconds:.1f} s)")
            return report
        if self.working:
            self.tally.memdir_changes += self.pending_memdir
        self.pending_memdir = 0
        self.tally.memdir_races += report.attempts - 1
        if self.working:
            self.tally.memdir_waited += getattr(report, "waited", 0.0)  # older code: absent
        self.observe()
        return report

    def observe(self) -> None:
        """Note every conflict block this replica holds (ids are shared by all replicas)."""
        from memdir.store import conflicted_paths, find_blocks

        for path in conflicted_paths(self.replica.root):
            self.tally.raised += [b.id for b in find_blocks(self.replica.store.read(path))
                                  if b.id not in self.tally.raised]

    def sync_git(self) -> None:
        started = time.perf_counter()
        ok = True
        _git("add", "-A", cwd=self.plain)
        if _git("diff", "--cached", "--quiet", cwd=self.plain, check=False).returncode:
            _git("commit", "-q", "-m", f"changes on {self.name}", cwd=self.plain)
        for _ in range(8):
            pulled = _git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main",
                          cwd=self.plain, check=False)
            if pulled.returncode != 0 and "CONFLICT" in pulled.stdout + pulled.stderr:
                _git("add", "-A", cwd=self.plain)  # modify/delete: keep what is there
                _git("commit", "-q", "--no-edit", cwd=self.plain, check=False)
            elif pulled.returncode != 0:
                ok = False
                break
            pushed = _git("push", "-q", "origin", "HEAD:main", cwd=self.plain, check=False)
            if pushed.returncode == 0:
                break
            if "rejected" not in pushed.stderr and "fetch first" not in pushed.stderr:
                ok = False
                break
            if self.working:
                self.tally.git_races += 1
        if self.working:
            self.tally.git_seconds += time.perf_counter() - started
            self.tally.git_syncs += 1
        if ok:
            if self.working:
                self.tally.git_changes += self.pending_git
            self.pending_git = 0
        else:
            self.tally.git_failed += 1


async def _work(agent: Agent, seconds: float, run: Path) -> None:
    deadline = time.monotonic() + seconds
    next_sync = time.monotonic() + agent.rng.uniform(1.0, 6.0)
    while time.monotonic() < deadline:
        await agent.step()
        await asyncio.sleep(agent.rng.uniform(0.02, 0.15))
        if time.monotonic() >= next_sync:
            if agent.git_first():
                agent.sync_git()
                report = agent.sync_memdir()
            else:
                report = agent.sync_memdir()
                agent.sync_git()
            if report is not None and report.ok and agent.rng.random() < 0.7:
                await agent.resolve_all()
            next_sync = time.monotonic() + agent.rng.uniform(1.0, 6.0)
    agent.working = False
    (run / f"{agent.name}.working-done").touch()
    quiet = 0
    while not (run / "stop").exists():
        resolved = await agent.resolve_all()
        report = agent.sync_memdir()
        if agent.pending_git:
            agent.sync_git()
        moved = report is None or not report.ok or report.sent or report.received or resolved
        quiet = 0 if moved else quiet + 1
        (run / f"{agent.name}.idle").write_text(str(quiet))
        await asyncio.sleep(agent.rng.uniform(0.5, 2.0))


def worker(args: argparse.Namespace) -> None:
    run = Path(args.run)
    agent = Agent(args.index, run, args.url, args.plain_url, args.seed, args.order)
    (run / f"{agent.name}.ready").touch()
    while not (run / "go").exists():
        time.sleep(0.05)
    asyncio.run(_work(agent, args.seconds, run))
    (run / f"{agent.name}.json").write_text(json.dumps(agent.tally.__dict__))


# -- the main process -------------------------------------------------------------------------


def _seed(run: Path, daemon: Daemon) -> None:
    from memdir.store import Store
    from memdir.store.replica import Replica

    for bare in ("memory.git", "plain.git"):
        _git("init", "-q", "--bare", "-b", "main", str(run / bare), cwd=run)
    seed = Replica(Store(run / "seed", create=True), name="seed")
    seed.attach(daemon.url("memory.git"))
    plain = run / "plain-seed"
    _git("clone", "-q", daemon.url("plain.git"), str(plain), cwd=run)
    for n, path in enumerate(SHARED):
        text = _doc(path, [f"- note seed-{n}-{k}" for k in range(8)])
        seed.store.create(path, text)
        target = plain / path.removeprefix("/memories/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    assert seed.sync().ok
    _git("add", "-A", cwd=plain)
    _git("commit", "-q", "-m", "seed", cwd=plain)
    _git("push", "-q", "origin", "HEAD:main", cwd=plain)


def _heads(run: Path, names: list[str]) -> set[str]:
    return {_git("rev-parse", "HEAD", cwd=run / name).stdout.strip() for name in names}


def simulate(replicas: int, seconds: float, partition: bool, base: Path,
             seed: int, order: str = "alternate") -> dict[str, Any]:
    run = base / ("partition" if partition else "steady")
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    daemon = Daemon(run)
    daemon.start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        _seed(run, daemon)
        names = [f"r{i}" for i in range(replicas)]
        for i in range(replicas):
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "worker", "--index", str(i), "--run", str(run),
                 "--url", daemon.url("memory.git"), "--plain-url", daemon.url("plain.git"),
                 "--seconds", str(seconds), "--seed", str(seed), "--order", order]))
        _wait_files(run, [f"{n}.ready" for n in names], procs, 300)
        (run / "go").touch()
        started = time.monotonic()
        cut = None
        if partition:
            time.sleep(seconds * 0.35)
            daemon.stop()
            cut_at = time.monotonic()
            time.sleep(seconds * 0.25)
            daemon.start()
            cut = time.monotonic() - cut_at
        _wait_files(run, [f"{n}.working-done" for n in names], procs, seconds + 300)
        writes_over = time.monotonic()
        converged = None
        deadline = writes_over + 600
        while time.monotonic() < deadline:
            idle = [int((run / f"{n}.idle").read_text() or 0) if (run / f"{n}.idle").exists()
                    else 0 for n in names]
            remote = _git("rev-parse", "main", cwd=run / "memory.git").stdout.strip()
            if min(idle) >= 2 and _heads(run, names) == {remote}:
                converged = time.monotonic() - writes_over
                break
            time.sleep(0.2)
        (run / "stop").touch()
        for proc in procs:
            proc.wait(timeout=300)
        total = time.monotonic() - started
        return {**_judge(run, names, converged, cut, total, seconds), "order": order}
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        daemon.stop()


def _wait_files(run: Path, files: list[str], procs: list[subprocess.Popen[bytes]],
                seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not all((run / f).exists() for f in files):
        if any(p.poll() not in (None, 0) for p in procs):
            raise RuntimeError("a worker failed; see its message above")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {files}")
        time.sleep(0.1)


def _state(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".memdir")}


def _judge(run: Path, names: list[str], converged: float | None, cut: float | None,
           total: float, seconds: float) -> dict[str, Any]:
    from memdir.store import find_blocks

    tallies = [json.loads((run / f"{n}.json").read_text()) for n in names]
    states = [_state(run / n) for n in names]
    identical = all(s == states[0] for s in states)
    text = "\n".join(data.decode("utf-8", "replace") for data in states[0].values())
    present = set(TOKEN.findall(text))
    added = {t for tally in tallies for t in tally["added"]}
    removed = {t for tally in tallies for t in tally["removed"]}
    lost = sorted(added - removed - present)
    left = sum(len(find_blocks(d.decode("utf-8", "replace"))) for d in states[0].values())

    def total_of(key: str) -> float:
        return float(sum(t[key] for t in tallies))

    memdir_cost = total_of("memdir_seconds") / max(1.0, total_of("memdir_changes"))
    git_cost = total_of("git_seconds") / max(1.0, total_of("git_changes"))
    return {
        "partition": cut is not None, "partition_seconds": cut, "replicas": len(names),
        "work_seconds": seconds, "run_seconds": total,
        "writes": int(total_of("writes")), "tokens_written": len(added),
        "tokens_removed_on_purpose": len(removed), "lost": len(lost), "lost_tokens": lost[:20],
        "identical": identical, "files": len(states[0]),
        "conflicts_raised": len({i for t in tallies for i in t["raised"]}),
        "conflicts_resolved": len({i for t in tallies for i in t["resolved"]}),
        "conflicts_left": left, "converge_seconds": converged,
        "memdir_syncs": int(total_of("memdir_syncs")),
        "quiesce_syncs": int(total_of("quiesce_syncs")),
        "memdir_offline_syncs": int(total_of("memdir_offline")),
        "memdir_push_races": int(total_of("memdir_races")),
        "memdir_race_wait_seconds": total_of("memdir_waited"),
        "memdir_sync_seconds": total_of("memdir_seconds"),
        "git_sync_seconds": total_of("git_seconds"),
        "git_syncs": int(total_of("git_syncs")), "git_failed_syncs": int(total_of("git_failed")),
        "git_push_races": int(total_of("git_races")),
        "memdir_seconds_per_change": memdir_cost, "git_seconds_per_change": git_cost,
        "cost_ratio": memdir_cost / git_cost if git_cost else None,
        "failed_tool_calls": int(total_of("failed_calls")),
    }


def _table(rows: list[dict[str, Any]]) -> str:
    head = ("| run | replicas | writes | lost | conflicts raised / resolved / left | "
            "converge (s) | working syncs | lost races memdir / git | memdir sync s/change | "
            "git pull+push s/change | ratio | identical |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        name = f"partition {r['partition_seconds']:.0f} s" if r["partition"] else "no partition"
        conv = f"{r['converge_seconds']:.1f}" if r["converge_seconds"] is not None else "no"
        lines.append(
            f"| {name} | {r['replicas']} | {r['writes']} | {r['lost']} | "
            f"{r['conflicts_raised']} / {r['conflicts_resolved']} / {r['conflicts_left']} | "
            f"{conv} | {r['memdir_syncs']} | "
            f"{r['memdir_push_races']} / {r.get('git_push_races', 0)} | "
            f"{r['memdir_seconds_per_change']:.3f} | "
            f"{r['git_seconds_per_change']:.3f} | {r['cost_ratio']:.2f}x | "
            f"{'yes' if r['identical'] else 'NO'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode")
    work = sub.add_parser("worker")
    for name in ("--index", "--seed"):
        work.add_argument(name, type=int, required=True)
    for name in ("--run", "--url", "--plain-url"):
        work.add_argument(name, required=True)
    work.add_argument("--seconds", type=float, required=True)
    work.add_argument("--order", choices=ORDERS, default="alternate")
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=45.0, help="writing time per run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here")
    parser.add_argument("--only", choices=("steady", "partition"), default=None)
    parser.add_argument(
        "--order", choices=ORDERS, default="alternate",
        help="which of the two syncs runs first at each sync moment: they take turns "
             "(the default: each worker switches every sync, half the workers starting "
             "with git's), or always memdir's, or always plain git's")
    args = parser.parse_args()
    if args.mode == "worker":
        worker(args)
        return
    base = args.out or Path(tempfile.mkdtemp(prefix="memdir-replicas-"))
    base.mkdir(parents=True, exist_ok=True)
    rows = []
    for partition in (False, True):
        if args.only and args.only != ("partition" if partition else "steady"):
            continue
        rows.append(simulate(args.replicas, args.seconds, partition, base, args.seed,
                             args.order))
        print(json.dumps(rows[-1], indent=2), file=sys.stderr)
    (base / "results.json").write_text(json.dumps(rows, indent=2))
    print(_table(rows))
    if any(r["lost"] or not r["identical"] for r in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
