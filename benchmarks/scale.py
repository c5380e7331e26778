"""How every memdir operation grows with the store, each beside an anchor from the same run.

Stores of 1,000, 10,000 and 100,000 files (about 4 KB each) come from the seeded
generator ``_gen.make_scale_store`` (nested folders, headings, cross-references,
verbatim and edited copies of sections); each is written once under ``--scratch``
and reused by later runs. On each store it times:

- whole commands, each a new process as a user's shell starts it: ``tree``, the
  ``/memories`` listing and a file through ``memdir tool``'s view, ``grep``, the
  first ranked ``search`` of a new process (with the index an earlier process
  saved), ``lint``, ``health``, a history snapshot after one change, and the
  history table (two steps);
- calls inside running servers: one MCP tool call each (view of ``/memories``,
  view of a file, grep) to ``memdir serve --transport http`` through the MCP
  SDK's client, and the pages of ``memdir browse``: tree, file, grep, ranked
  search and health (first request and median of the next ones);
- anchors, measured in the same run on the same store: ``find`` plus ``head`` and
  a plain Python walk reading each file's first lines (listings), ``cat`` (a
  file), GNU ``grep -rn`` and ripgrep (grep), SQLite FTS5 in a new process and in
  a warm connection (ranked search), a YAML header check of every file (lint),
  scikit-learn's TF-IDF fit over every file (health), and ``git add -A && git
  commit`` after one change (snapshot).

Each row gets its growth exponent (slope of log time over log files between two
sizes; 1.0 is linear) and its peak resident memory. ``--before SRC`` measures
every memdir row a second time with the code of another ``src`` folder (e.g. a
``git worktree`` of main: ``git worktree add /tmp/main-before main`` and
``--before /tmp/main-before/src``), interleaved with this checkout's rows, so the
closing table compares the two in one run. Commands run under ``--timeout`` and
an address-space limit of ``--mem-gb`` GB; a row that exceeds them says so.

Run it niced, on a machine others share: ``nice uv run --no-sync python
benchmarks/scale.py --sizes 1000,10000,100000 --before /tmp/main-before/src``.
Results go to ``--out`` (JSON), a markdown table on standard output, and a plot
of the curves to ``--plot``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _gen import make_scale_store  # noqa: E402
from _scale_anchors import fts5_build, listing  # noqa: E402
from _scale_run import BrowseServer, McpServer, Timing, best_of, run_once, time_calls  # noqa: E402

REGEX = r"\d{3}-\d{2}"
"""The grep rows' regex-only pattern (no literal to look for first), as the tools write it."""
REGEX_POSIX = "[0-9]{3}-[0-9]{2}"
"""The same pattern for GNU grep -E and ripgrep."""
PROBES = HERE / "_scale_probes.py"

PYTHON = sys.executable
GENERATOR = "scale-v2"
"""Bump when ``make_scale_store`` changes, so stores written by the old one are not reused."""
RESULTS = HERE / "results"
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
        "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"]


@dataclass
class Store:
    """One generated store and what the rows ask of it."""

    files: int
    root: Path
    sample: str
    """The agent path of a mid-sized file that rows view."""
    rare: str
    """A word that occurs in a few hundred lines per 1,000 files (the grep pattern)."""
    query: str
    """The ranked-search query."""
    fts: Path
    """The SQLite FTS5 index of the store (the ranked-search anchor)."""
    scratch: Path

    @property
    def host_sample(self) -> Path:
        """The sample file on disk."""
        return self.root / self.sample.removeprefix("/memories/")


@dataclass
class Version:
    """A memdir source tree under test: its label and the environment its processes get."""

    label: str
    env: dict[str, str]


@dataclass
class Row:
    """One measured operation.

    Attributes:
        name: What the table calls it.
        kind: ``command`` (a new process), ``mcp`` (a call to a running MCP server) or
            ``browse`` (a page of a running browse server).
        anchor: The anchor its ratio is taken against.
        argv: For commands: the argument list for a store (``memdir`` is ``[python, -m,
            memdir]``).
        call: For server rows: the MCP tool call, or the page's path.
        ok: Exit codes that mean success.
        prepare: Run before each timed run (e.g. make the one change a snapshot records).
        cold: Report the first request (the page computes on first sight, then caches).
    """

    name: str
    kind: str
    anchor: str
    argv: Callable[[Store, Path], list[str]] | None = None
    call: Callable[[Store], Any] | None = None
    ok: tuple[int, ...] = (0,)
    prepare: Callable[[Store, Path], None] | None = None
    cold: bool = False
    store: str = "main"
    """``main`` (the generated store), ``history`` (the version's versioned copy) or
    ``long`` (a copy with a history of ``--long-steps`` steps, at ``--long-files`` only)."""
    warm: bool = True
    """Run once untimed first (False for rows that take many minutes)."""


def _memdir(*args: str) -> list[str]:
    return [PYTHON, "-m", "memdir", *args]


def _view(path: str) -> str:
    return json.dumps({"name": "view", "arguments": {"path": path}})


def change_one_file(store: Store, root: Path) -> None:
    """Append a line to one file, written atomically (a hard-linked copy stays intact)."""
    target = root / store.sample.removeprefix("/memories/")
    text = target.read_text(encoding="utf-8") + f"\nA change noted at {time.time_ns()}.\n"
    temp = target.with_name(target.name + ".bench-tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, target)


ROWS: list[Row] = [
    Row("tree", "command", "find + head", argv=lambda s, r: _memdir("tree", str(r))),
    Row("listing: view /memories", "command", "find + head",
        argv=lambda s, r: _memdir("tool", str(r), _view("/memories"))),
    Row("view a file", "command", "cat",
        argv=lambda s, r: _memdir("tool", str(r), _view(s.sample))),
    Row("grep", "command", "grep -rn", argv=lambda s, r: _memdir("grep", str(r), s.rare)),
    Row("ranked search, new process", "command", "FTS5, new process",
        argv=lambda s, r: _memdir("tool", str(r), "--set", "bm25", json.dumps(
            {"name": "search", "arguments": {"query": s.query}}))),
    Row("lint", "command", "YAML header check", argv=lambda s, r: _memdir(
        "lint", str(r), "--json"), ok=(0, 1)),
    Row("health", "command", "TF-IDF fit", argv=lambda s, r: _memdir(
        "health", str(r), "--json"), ok=(0, 1)),
    Row("history snapshot after one change", "command", "git add -A && git commit",
        argv=lambda s, r: _memdir("history", str(r), "snapshot", "--message", "one change"),
        prepare=change_one_file, store="history"),
    Row("history table (2 steps)", "command", "TF-IDF fit",
        argv=lambda s, r: _memdir("history", str(r), "table"), store="history"),
    Row("history snapshot after one change, long-lived History", "probe",
        "git add -A && git commit", argv=lambda s, r: [
            PYTHON, str(PROBES), "snapshots", str(r), s.sample, "5"], store="history"),
    Row("history verify (long history)", "command", "git log --raw (long history)",
        argv=lambda s, r: _memdir("history", str(r), "verify"), store="long", warm=False),
    Row("history table (long history)", "command", "git log --raw (long history)",
        argv=lambda s, r: _memdir("history", str(r), "table"), store="long", warm=False),
    Row("mcp (bm25 set): ranked search", "mcp-bm25", "FTS5, warm connection",
        call=lambda s: ("search", {"query": s.query})),
    Row("mcp: grep -i", "mcp", "rg -n -i",
        call=lambda s: ("grep", {"pattern": s.rare, "ignore_case": True})),
    Row("mcp: grep regex", "mcp", "rg -n regex", call=lambda s: ("grep", {"pattern": REGEX})),
    Row("mcp: view /memories", "mcp", "listing, in process",
        call=lambda s: ("view", {"path": "/memories"})),
    Row("mcp: view a file", "mcp", "read, in process",
        call=lambda s: ("view", {"path": s.sample})),
    Row("mcp: grep", "mcp", "rg -n", call=lambda s: ("grep", {"pattern": s.rare})),
    Row("browse: tree page", "browse", "listing, in process", call=lambda s: "/s/store/"),
    Row("browse: file page", "browse", "read, in process",
        call=lambda s: "/s/store/file/" + s.sample.removeprefix("/memories/")),
    Row("browse: grep page", "browse", "rg -n", call=lambda s: f"/s/store/search?q={s.rare}"),
    Row("browse: ranked search page", "browse", "FTS5, warm connection",
        call=lambda s: "/s/store/search?mode=ranked&q=" + s.query.replace(" ", "+")),
    Row("browse: health page (first request)", "browse", "TF-IDF fit",
        call=lambda s: "/s/store/health", cold=True),
]
"""Every row, in the order they run (the health page last: it is the slowest)."""


def _anchors(store: Store, wanted: set[str], runs: int, timeout: float, mem_gb: float
             ) -> dict[str, Timing]:
    """The anchors named in ``wanted`` (and the cheap in-process ones), timed on ``store``."""
    env = dict(os.environ)
    root = str(store.root)
    found: dict[str, Timing] = {}

    def command(name: str, argv: list[str], **kw: Any) -> None:
        if name in wanted:
            found[name] = best_of(argv, env, runs, timeout=timeout, mem_gb=mem_gb, **kw)

    anchors = HERE / "_scale_anchors.py"
    command("find + head", ["sh", "-c", f"find '{root}' -name '*.md' -exec head -q -n 4 {{}} +"])
    command("listing, python", [PYTHON, str(anchors), "listing", root])
    command("cat", ["cat", str(store.host_sample)])
    command("grep -rn", ["grep", "-rn", store.rare, root], ok=(0, 1))
    command("grep -rn -i", ["grep", "-rn", "-i", store.rare, root], ok=(0, 1))
    command("grep -rn regex", ["grep", "-rnE", REGEX_POSIX, root], ok=(0, 1))
    if shutil.which("rg"):
        command("rg -n", ["rg", "-n", store.rare, root], ok=(0, 1))
        command("rg -n -i", ["rg", "-n", "-i", store.rare, root], ok=(0, 1))
        command("rg -n regex", ["rg", "-n", REGEX_POSIX, root], ok=(0, 1))
    command("FTS5, new process", [PYTHON, str(anchors), "fts5-query", str(store.fts),
                                  store.query])
    command("YAML header check", [PYTHON, str(anchors), "frontmatter", root])
    command("TF-IDF fit", [PYTHON, str(anchors), "tfidf", root])
    if "git add -A && git commit" in wanted:
        git_root = git_anchor_copy(store)
        commit = " && ".join(["git add -A", " ".join(_GIT) + " commit -q -m 'one change'"])
        found["git add -A && git commit"] = best_of(
            ["sh", "-c", commit], {**env, "GIT_DIR": str(git_root / ".git"),
                                   "GIT_WORK_TREE": str(git_root)},
            runs, timeout=timeout, mem_gb=mem_gb,
            before=lambda: change_one_file(store, git_root))
    if "listing, in process" in wanted:
        found["listing, in process"] = _in_process(lambda: len(listing(store.root)), runs)
    found["read, in process"] = _in_process(
        lambda: len(store.host_sample.read_bytes()), max(runs, 5))
    if "FTS5, warm connection" in wanted:
        con = sqlite3.connect(f"file:{store.fts}?mode=ro", uri=True)
        match = " OR ".join(f'"{w}"' for w in store.query.split())
        sql = "SELECT path FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10"
        found["FTS5, warm connection"] = _in_process(
            lambda: len(con.execute(sql, (match,)).fetchall()), max(runs, 5))
        con.close()
    return found


def _in_process(fn: Callable[[], int], runs: int) -> Timing:
    best = float("inf")
    size = 0
    for _ in range(runs):
        start = time.perf_counter()
        size = fn()
        best = min(best, time.perf_counter() - start)
    return Timing(best, None, runs, size=size)


def store_root(files: int, scratch: Path, seed: int) -> Path:
    """Where the generated store of ``files`` files is kept (its ``.json`` beside it)."""
    return scratch / f"store-{files}-seed{seed}-{GENERATOR}"


def prepare_store(files: int, scratch: Path, seed: int, *, fts: bool = True) -> Store:
    """The generated store of ``files`` files (written on first use) and its FTS5 index.

    The index is built (once) only with ``fts``: rows whose anchors do not query it
    skip the minutes it takes at 100,000 files.
    """
    root = store_root(files, scratch, seed)
    marker = root.with_suffix(".json")
    if not marker.exists():
        shutil.rmtree(root, ignore_errors=True)
        start = time.perf_counter()
        made = make_scale_store(root, files, seed=seed)
        info = {"files": len(made.paths), "bytes": made.total_bytes,
                "folders": len(made.folders), "duplicates": made.duplicates,
                "near_duplicates": made.near_duplicates, "dangling": made.dangling,
                "sample": made.paths[len(made.paths) // 2], "rare": made.vocab[1500],
                "query": " ".join(made.vocab[k] for k in (60, 400, 1200)),
                "seconds": round(time.perf_counter() - start, 1)}
        marker.write_text(json.dumps(info), encoding="utf-8")
    info = json.loads(marker.read_text(encoding="utf-8"))
    index = root.with_name(root.name + ".fts5.db")
    if fts and not index.exists():
        fts5_build(root, index)
    # The folder itself, not a link to it: `find` does not enter a link it is given.
    return Store(files, root.resolve(), info["sample"], info["rare"], info["query"], index,
                 scratch)


def _copy(source: Path, target: Path) -> None:
    """A hard-linked copy of a store (files are replaced, never written in place)."""
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    shutil.rmtree(target / ".memdir", ignore_errors=True)
    shutil.rmtree(target / ".git", ignore_errors=True)


def history_copy(store: Store, version: Version, timeout: float, mem_gb: float) -> Path:
    """A fresh versioned copy of the store for one version: initial snapshot plus one change."""
    root = store.scratch / f"history-{store.files}-{version.label}"
    _copy(store.root, root)
    for argv in (_memdir("history", str(root), "init"),
                 _memdir("history", str(root), "snapshot", "--message", "initial")):
        got = run_once(argv, version.env, timeout=timeout, mem_gb=mem_gb)
        if got.seconds is None:
            raise RuntimeError(f"{' '.join(argv[3:])}: {got.error}")
    change_one_file(store, root)
    got = run_once(_memdir("history", str(root), "snapshot", "--message", "change"), version.env,
                   timeout=timeout, mem_gb=mem_gb)
    if got.seconds is None:
        raise RuntimeError(f"snapshot: {got.error}")
    return root


def git_anchor_copy(store: Store) -> Path:
    """A hard-linked copy of the store committed once to a plain git repository."""
    root = store.scratch / f"git-{store.files}"
    _copy(store.root, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "info" / "exclude").write_text(".memdir/\n*.bench-tmp\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*_GIT, "commit", "-q", "-m", "initial"], cwd=root, check=True)
    return root


@dataclass
class Results:
    """Every timing: ``rows[row][version][files]`` and ``anchors[anchor][files]``."""

    rows: dict[str, dict[str, dict[int, Timing]]] = field(default_factory=dict)
    anchors: dict[str, dict[int, Timing]] = field(default_factory=dict)
    stores: dict[int, dict[str, Any]] = field(default_factory=dict)

    def put(self, row: str, version: str, files: int, timing: Timing) -> None:
        self.rows.setdefault(row, {}).setdefault(version, {})[files] = timing
        shown = f"{timing.seconds:.3f} s" if timing.seconds is not None else timing.error
        peak = f", {timing.peak_mb:.0f} MB" if timing.peak_mb else ""
        print(f"  {row:<40} {version:<7} {files:>7}: {shown}{peak}", flush=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "stores": self.stores,
            "rows": {r: {v: {str(n): t.to_dict() for n, t in by.items()}
                         for v, by in vs.items()} for r, vs in self.rows.items()},
            "anchors": {a: {str(n): t.to_dict() for n, t in by.items()}
                        for a, by in self.anchors.items()},
        }


def _seconds(row: Row, timing: Timing) -> Timing:
    if row.cold and timing.cold is not None:
        return Timing(timing.cold, timing.peak_mb, 1, size=timing.size)
    return timing


def measure_size(store: Store, rows: list[Row], versions: list[Version], args: argparse.Namespace,
                 results: Results) -> None:
    """The anchors on one store, then every row for every version."""
    print(f"\n{store.files} files: {store.root}", flush=True)
    # The anchors first, so a run stopped part way still has a ratio for what it measured.
    anchor_names = {r.anchor for r in rows}
    if any("grep" in r.name for r in rows):
        anchor_names |= {"grep -rn", "rg -n", "grep -rn -i", "rg -n -i", "grep -rn regex",
                         "rg -n regex"}
    long = store.files == args.long_files and any(r.store == "long" for r in rows)
    rows = [r for r in rows if r.store != "long" or long]
    for name, timing in _anchors(store, anchor_names, args.runs, args.timeout,
                                 args.mem_gb).items():
        results.anchors.setdefault(name, {})[store.files] = timing
        print(f"  anchor {name:<33} {store.files:>7}: {timing.seconds:.3f} s"
              if timing.seconds is not None else f"  anchor {name}: {timing.error}", flush=True)
    wanted = {r.kind for r in rows}
    histories: dict[str, Path] = {}
    if any(r.store == "history" for r in rows):
        for v in versions:
            histories[v.label] = history_copy(store, v, args.timeout, args.mem_gb)
    long_root = None
    if long:
        long_root = long_history(store, args.long_steps, versions[0], args.long_timeout,
                                 args.mem_gb)
        results.anchors.setdefault("git log --raw (long history)", {})[store.files] = best_of(
            ["git", "-C", str(long_root), "log", "--raw", "--no-abbrev", "--reverse"],
            dict(os.environ), args.runs, timeout=args.timeout, mem_gb=args.mem_gb)
    for row in (r for r in rows if r.kind == "probe"):
        for v in versions:
            root = histories[v.label] if row.store == "history" else store.root
            assert row.argv is not None
            results.put(row.name, v.label, store.files,
                        _probe(row.argv(store, root), v.env, args.timeout, args.mem_gb))
    _command_rows(store, [r for r in rows if r.kind == "command"], versions, args, results,
                  histories, long_root)
    for v in versions:
        if "mcp" in wanted:
            _mcp_rows(store, [r for r in rows if r.kind == "mcp"], v, args, results)
        if "mcp-bm25" in wanted:
            _mcp_rows(store, [r for r in rows if r.kind == "mcp-bm25"], v, args, results,
                      flags=["--set", "bm25"])
        if "browse" in wanted:
            _browse_rows(store, [r for r in rows if r.kind == "browse"], v, args, results)


def _command_rows(store: Store, rows: list[Row], versions: list[Version],
                  args: argparse.Namespace, results: Results, histories: dict[str, Path],
                  long_root: Path | None) -> None:
    """Each command row for each version: a warm-up run, then the best of ``--runs``."""
    for row in rows:
        for v in versions:
            root = {"history": histories.get(v.label), "long": long_root}.get(
                row.store) or store.root
            timeout = args.long_timeout if row.store == "long" else args.timeout
            assert row.argv is not None
            argv = row.argv(store, root)
            if not row.warm:
                results.put(row.name, v.label, store.files, run_once(
                    argv, v.env, timeout=timeout, mem_gb=args.mem_gb, ok=row.ok))
                continue
            warm = run_once(argv, v.env, timeout=args.timeout, mem_gb=args.mem_gb, ok=row.ok)
            if warm.seconds is None and not (warm.error or "").startswith("timeout"):
                # a first run may fail where later ones do not (a cold ranked search over a
                # busy machine can run out of the tool's time): one more try, then it counts
                warm = run_once(argv, v.env, timeout=args.timeout, mem_gb=args.mem_gb, ok=row.ok)
            if warm.seconds is None:  # the warm-up failed twice: that is the row's answer
                results.put(row.name, v.label, store.files, warm)
                continue
            prepare = row.prepare
            got = best_of(argv, v.env, args.runs, timeout=args.timeout, mem_gb=args.mem_gb,
                          ok=row.ok, before=(lambda p=prepare, r=root: p(store, r))
                          if prepare else None)
            results.put(row.name, v.label, store.files, got)


def _probe(argv: list[str], env: dict[str, str], timeout: float, mem_gb: float) -> Timing:
    """Run a probe of ``_scale_probes.py``: the seconds and CPU seconds it printed."""
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Timing(None, error=f"timeout after {timeout:.0f} s")
    if done.returncode != 0:
        return Timing(None, error=f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return Timing(got["seconds"], None, int(got.get("runs", 1)), cpu=got.get("cpu"))


def long_history(store: Store, steps: int, version: Version, timeout: float, mem_gb: float
                 ) -> Path:
    """A copy of the store with a history of ``steps`` snapshots (made once, then reused).

    Every version reads the same repository: the table and verify rows only read it.
    """
    root = store.scratch / f"long-{store.files}-{steps}-{GENERATOR}"
    marker = root.with_suffix(".json")
    if marker.exists():
        return root
    _copy(store.root, root)
    print(f"  making a history of {steps} steps in {root}", flush=True)
    got = _probe([PYTHON, str(PROBES), "make-history", str(root), str(steps), "3"],
                 version.env, timeout, mem_gb)
    if got.seconds is None:
        raise RuntimeError(f"making the long history: {got.error}")
    marker.write_text(json.dumps({"steps": steps, "seconds": got.seconds}), encoding="utf-8")
    return root


def _serves_sets(version: Version) -> bool:
    """Whether the version's ``memdir serve`` takes ``--set`` (main's did not, before this)."""
    done = subprocess.run(_memdir("serve", "--help"), env=version.env, capture_output=True,
                          text=True, check=False, stdin=subprocess.DEVNULL, timeout=300)
    return "--set" in done.stdout


def _mcp_rows(store: Store, rows: list[Row], version: Version, args: argparse.Namespace,
              results: Results, flags: list[str] | None = None) -> None:
    launcher = None
    if flags and flags[0] == "--set" and not _serves_sets(version):
        launcher = [PYTHON, str(PROBES), "serve-set", str(store.root), flags[1]]
    try:
        server = McpServer(PYTHON, store.root, version.env, args.mem_gb, flags or [], launcher)
    except RuntimeError as exc:  # the server did not start: every row says why
        for row in rows:
            results.put(row.name, version.label, store.files, Timing(None, error=str(exc)[:300]))
        return
    try:
        calls = [r.call(store) for r in rows if r.call is not None]
        for row, timing in zip(rows, server.calls(calls, args.repeat, args.timeout),
                               strict=True):
            results.put(row.name, version.label, store.files, timing)
    finally:
        server.stop()


def _browse_rows(store: Store, rows: list[Row], version: Version, args: argparse.Namespace,
                 results: Results) -> None:
    server = BrowseServer(PYTHON, store.root, version.env, args.mem_gb)
    try:
        for row in rows:
            assert row.call is not None
            path = row.call(store)
            if not server.alive:
                results.put(row.name, version.label, store.files,
                            Timing(None, error=f"server gone: {server.output()[-200:]}"))
                continue
            live = server
            timing = time_calls(lambda p=path, s=live: s.get(p),
                                1 if row.cold else args.repeat, lambda s=live: s.peak_mb,
                                args.timeout)
            results.put(row.name, version.label, store.files, _seconds(row, timing))
            if timing.error and timing.error.startswith("timeout"):
                server.stop()  # stuck on this page: later pages get a fresh server
                server = BrowseServer(PYTHON, store.root, version.env, args.mem_gb)
    finally:
        server.stop()


def exponent(by_size: dict[int, Timing], lo: int, hi: int) -> float | None:
    """Slope of log seconds over log files between two sizes (1.0 is linear)."""
    a, b = by_size.get(lo), by_size.get(hi)
    if a is None or b is None or not a.seconds or not b.seconds or lo == hi:
        return None
    return math.log(b.seconds / a.seconds) / math.log(hi / lo)


def _cell(t: Timing | None) -> str:
    if t is None:
        return "-"
    if t.seconds is None:
        return "timeout" if t.error and t.error.startswith("timeout") else "failed"
    return f"{t.seconds:.3g} s" if t.seconds >= 0.1 else f"{t.seconds * 1000:.3g} ms"


def _short(files: int) -> str:
    return f"{files // 1000}k" if files >= 1000 and files % 1000 == 0 else str(files)


def table(results: Results, rows: list[Row], sizes: list[int], labels: list[str]) -> str:
    """The markdown table: each row per version, its exponents, memory and anchor ratio."""
    big = sizes[-1]
    pairs = list(zip(sizes, sizes[1:], strict=False))
    head = ["row", "code", *[f"{n:,} files" for n in sizes],
            *[f"exp {_short(a)}-{_short(b)}" for a, b in pairs], f"peak MB ({big:,})",
            f"CPU/call ({big:,})",
            "anchor", f"anchor ({big:,})", "x anchor"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        for label in labels:
            by = results.rows.get(row.name, {}).get(label, {})
            if not by:
                continue
            anchor = results.anchors.get(row.anchor, {})
            mine, base = by.get(big), anchor.get(big)
            ratio = (f"{mine.seconds / base.seconds:.1f}x" if mine and base and mine.seconds
                     and base.seconds else "-")
            exps = [exponent(by, a, b) for a, b in pairs]
            cells = [row.name, label, *[_cell(by.get(n)) for n in sizes],
                     *[f"{e:.2f}" if e is not None else "-" for e in exps],
                     f"{mine.peak_mb:.0f}" if mine and mine.peak_mb else "-",
                     _cell(Timing(mine.cpu)) if mine and mine.cpu is not None else "-",
                     row.anchor, _cell(base), ratio]
            out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("| anchor | " + " | ".join(f"{n:,} files" for n in sizes) + " | exp |")
    out.append("|---|" + "---|" * (len(sizes) + 1))
    for name, by in results.anchors.items():
        e = exponent(by, sizes[0], big) if len(sizes) > 1 else None
        out.append(f"| {name} | " + " | ".join(_cell(by.get(n)) for n in sizes)
                   + f" | {e:.2f} |" if e is not None else f"| {name} | "
                   + " | ".join(_cell(by.get(n)) for n in sizes) + " | - |")
    return "\n".join(out)


def plot(results: Results, rows: list[Row], labels: list[str], path: Path) -> None:
    """One log-log panel per row: each version's curve and the row's anchor."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.name in results.rows]
    cols = 4
    lines = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(lines, cols, figsize=(4 * cols, 3.2 * lines), squeeze=False)
    styles = {labels[0]: ("tab:blue", "-")} | {
        lab: (c, "--") for lab, c in zip(labels[1:], ["tab:red", "tab:orange"], strict=False)}
    for ax, row in zip(axes.flat, shown, strict=False):
        for label in labels:
            by = results.rows[row.name].get(label, {})
            points = sorted((n, t.seconds) for n, t in by.items() if t.seconds)
            failed = sorted(n for n, t in by.items() if t.seconds is None)
            color, dash = styles[label]
            if points:
                ax.plot(*zip(*points, strict=True), dash, marker="o", color=color, label=label)
            for n in failed:
                ax.plot([n], [ax.get_ylim()[1] if points else 1], "x", color=color,
                        markersize=10, label=f"{label}: no answer")
        anchor = results.anchors.get(row.anchor, {})
        points = sorted((n, t.seconds) for n, t in anchor.items() if t.seconds)
        if points:
            ax.plot(*zip(*points, strict=True), ":", marker=".", color="grey",
                    label=f"anchor: {row.anchor}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(row.name, fontsize=9)
        ax.set_xlabel("files", fontsize=8)
        ax.set_ylabel("seconds", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _version(label: str, src: Path) -> Version:
    # The tool's own time limit is lifted: rows measure how long a call takes, and a
    # loaded machine would otherwise turn a slow answer into no answer.
    env = dict(os.environ, COLUMNS="100", PYTHONPATH=str(src.resolve()),
               MEMDIR_TOOL_TIME_LIMIT="3600")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install keeps its bytecode cache
    return Version(label, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="Comma-separated file counts.")
    parser.add_argument("--scratch", type=Path, default=Path("/work/scratch/growth-scan"),
                        help="Where the generated stores are kept between runs.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--after", type=Path, default=HERE.parent / "src",
                        help="The src folder of the code under test (default: this checkout's; "
                        "a worktree of a commit keeps a long run from seeing later edits).")
    parser.add_argument("--before", type=Path, default=None,
                        help="A src folder of other memdir code (e.g. main's) to measure too.")
    parser.add_argument("--rows", default="",
                        help="Comma-separated substrings: run only rows whose name has one "
                        "(=NAME: only the row of that name).")
    parser.add_argument("--runs", type=int, default=3, help="Best of this many runs per command.")
    parser.add_argument("--repeat", type=int, default=5, help="Warm requests per server row.")
    parser.add_argument("--timeout", type=float, default=900.0, help="Seconds per command.")
    parser.add_argument("--mem-gb", type=float, default=8.0,
                        help="Address-space limit of every command and server, in GB.")
    parser.add_argument("--out", type=Path, default=RESULTS / "scale.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "scale.png")
    parser.add_argument("--long-files", type=int, default=10_000,
                        help="The store size that gets the long-history rows.")
    parser.add_argument("--long-steps", type=int, default=1000,
                        help="Steps of the long history (history table and verify rows).")
    parser.add_argument("--long-timeout", type=float, default=3600.0,
                        help="Seconds per long-history command.")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    versions = [_version("after", args.after)]
    if args.before is not None:
        versions.append(_version("before", args.before))
    wanted = [w.strip() for w in args.rows.split(",") if w.strip()]
    rows = [r for r in ROWS if not wanted or any(
        r.name == w[1:] if w.startswith("=") else w in r.name for w in wanted)]
    args.scratch.mkdir(parents=True, exist_ok=True)
    results = Results()
    for n in sizes:
        store = prepare_store(n, args.scratch, args.seed,
                              fts=any("FTS5" in r.anchor for r in rows))
        results.stores[n] = json.loads(
            store_root(n, args.scratch, args.seed).with_suffix(".json").read_text())
        measure_size(store, rows, versions, args, results)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results.to_dict(), indent=1), encoding="utf-8")
    labels = [v.label for v in versions]
    print()
    print(table(results, rows, sizes, labels))
    plot(results, rows, labels, args.plot)
    print(f"\nwrote {args.out} and {args.plot}")


if __name__ == "__main__":
    main()
