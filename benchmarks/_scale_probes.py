"""Scale-benchmark probes that run inside one process of the version under test.

- ``snapshots STORE SAMPLE N``: one :class:`~memdir.store.history.History` object
  takes a first snapshot, then N more, each after one file (``SAMPLE``, an agent
  path) was replaced atomically, as a build or a skills run snapshots each unit.
  Prints JSON: the median seconds and CPU seconds (this process and its git
  children) of those N snapshots.
- ``serve-set STORE SET PORT``: serve the named tool set over streamable HTTP on
  the loopback port with memdir's own server functions (``build_server``,
  ``run_http``; the token from ``MEMDIR_MCP_TOKEN``), as ``memdir serve --set SET``
  does: for a version whose ``memdir serve`` has no ``--set`` (main before it).
- ``make-history STORE STEPS SEED``: give a store a history of STEPS snapshots,
  each after one to four seeded edits (an appended line, written through the
  store), for the history table and verify rows. Prints the seconds it took.
- ``table-steps STORE N [--no-b3]``: the first N rows of ``memdir history STORE
  table``: ``measure_history`` itself, on the history cut to its first N steps.
  Prints JSON: the CPU seconds of each step (from the progress calls; the first
  includes reading and parsing the blobs), the mean of the later steps, from
  which the whole table's cost is extrapolated, the mean CPU of each phase over
  the later steps (the tree, Panel A, Panel B and, within Panel B, B3), and the
  rows, to compare versions. ``--no-b3`` skips B3 (its column is then empty), to
  time the rest of a step on its own.

Run: ``python benchmarks/_scale_probes.py PROBE ARGS...`` with the version's code on
``PYTHONPATH``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def snapshots(root: Path, sample: str, n: int) -> dict[str, float]:
    """Median seconds and CPU seconds of ``n`` snapshots after one change each."""
    from memdir.store import Store
    from memdir.store.history import History

    history = History(Store(root))
    history.snapshot("probe: first")
    target = root / sample.removeprefix("/memories/")
    seconds: list[float] = []
    cpu: list[float] = []
    for k in range(n):
        text = target.read_text(encoding="utf-8") + f"\nA change noted at {time.time_ns()}.\n"
        temp = target.with_name(target.name + ".bench-tmp")
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, target)
        start, used = time.perf_counter(), _cpu()
        history.snapshot(f"probe: change {k}")
        seconds.append(time.perf_counter() - start)
        cpu.append(_cpu() - used)
    return {"seconds": statistics.median(seconds), "cpu": statistics.median(cpu), "runs": n}


def make_history(root: Path, steps: int, seed: int) -> dict[str, float]:
    """Snapshot ``root`` ``steps`` times, one to four seeded edits before each but the first."""
    from memdir.store import Store
    from memdir.store.history import History

    start = time.perf_counter()
    store = Store(root)
    history = History(store)
    history.init()
    rng = random.Random(seed)
    paths = sorted(n.virtual for n in store.tree() if n.kind == "memory")
    history.snapshot("step 0")
    for i in range(1, steps):
        for _ in range(rng.randint(1, 4)):
            path = rng.choice(paths)
            store.write(path, store.read(path) + f"\nnote {i}\n")
        history.snapshot(f"step {i}")
        if i % 100 == 0:
            print(f"  history step {i}/{steps}", file=sys.stderr, flush=True)
    return {"seconds": time.perf_counter() - start, "steps": steps}


def _timed(owner: object, name: str, spent: dict[str, float], phase: str) -> None:
    """Wrap ``owner.name`` so the CPU seconds of its calls add up in ``spent[phase]``."""
    inner = getattr(owner, name)

    def timed(*args: object, **kwargs: object) -> object:
        start = _cpu()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[phase] = spent.get(phase, 0.0) + _cpu() - start

    setattr(owner, name, timed)


class _FirstSteps:
    """A history cut to its first ``n`` steps, for what ``measure_history`` reads of it."""

    def __init__(self, history: object, n: int) -> None:
        self.history, self.n = history, n

    def step_changes(self) -> object:
        return itertools.islice(self.history.step_changes(), self.n)  # type: ignore[attr-defined]

    def read_blobs(self, blobs: object) -> object:
        return self.history.read_blobs(blobs)  # type: ignore[attr-defined]

    def each_blob(self, blobs: object) -> object:
        return self.history.each_blob(blobs)  # type: ignore[attr-defined]


def table_steps(root: Path, n: int, *, b3: bool = True) -> dict[str, object]:
    """CPU of the first ``n`` rows of the history table (see the module docstring)."""
    from memdir.metrics import Measurer, _measure, _taxonomy, measure_history
    from memdir.store import Store
    from memdir.store.history import History

    spent: dict[str, float] = {}
    _timed(Measurer, "tree", spent, "tree")
    # Panel A: measure_shape in main's code, the sums kept with the tree in the new one
    _timed(_measure, "_shape" if hasattr(_measure, "_shape") else "measure_shape", spent,
           "panel A")
    try:  # Panel B of each step from the last one's (memdir.metrics._steps), where it exists
        from memdir.metrics import _steps
    except ImportError:
        _timed(_measure, "measure_taxonomy", spent, "panel B")
        if not b3:
            _taxonomy._b3 = lambda *args, **kwargs: (None, [], 0)  # type: ignore[attr-defined]
        _timed(_taxonomy, "_b3", spent, "B3")
    else:
        steps = _steps.TaxonomySteps
        _timed(steps, "measure", spent, "panel B")
        if not b3:
            steps._b3 = lambda *args, **kwargs: (None, [], 0)  # type: ignore[method-assign]
        _timed(steps, "_b3", spent, "B3")
    marks = [_cpu()]

    def progress(done: int, total: int) -> None:
        marks.append(_cpu())
        if done == 1:
            spent.clear()  # the phases of the steps after the first (which builds from nothing)

    trajectory = measure_history(_FirstSteps(History(Store(root)), n),  # type: ignore[arg-type]
                                 measurer=Measurer(), progress=progress)
    cpu = [b - a for a, b in itertools.pairwise(marks)]
    later = len(cpu) - 1
    phases = {name: value / later for name, value in spent.items()} if later else {}
    return {"steps": len(cpu), "step_cpu": cpu,
            "first_step_cpu": cpu[0] if cpu else 0.0,
            "mean_later_step_cpu": statistics.fmean(cpu[1:]) if later else 0.0,
            "later_phase_cpu": phases, "rows": trajectory.table()}


def serve_set(root: Path, name: str, port: int) -> None:
    """Serve tool set ``name`` of the store at ``root`` until killed."""
    from memdir.server import build_server, run_http
    from memdir.store import Store
    from memdir.tools import make_toolset

    toolset = make_toolset(name, Store(root, sweep_now=False))
    run_http(build_server(toolset), host="127.0.0.1", port=port,
             token=os.environ.get("MEMDIR_MCP_TOKEN"))


def main() -> None:
    probe, *args = sys.argv[1:]
    if probe == "serve-set":
        serve_set(Path(args[0]), args[1], int(args[2]))
        return
    if probe == "snapshots":
        out = snapshots(Path(args[0]), args[1], int(args[2]))
    elif probe == "make-history":
        out = make_history(Path(args[0]), int(args[1]), int(args[2]))
    elif probe == "table-steps":
        out = table_steps(Path(args[0]), int(args[1]), b3="--no-b3" not in args[2:])
    else:
        raise SystemExit(f"unknown probe {probe!r}: snapshots, make-history or table-steps")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
