"""Benchmark the store-health metrics on a large store and on a long history.

Builds, from a fixed seed, a ~612 KB store of folders, files and nested headings
(the size of the paper's largest verbatim dump) and a 140-snapshot history that
grows into it with renames and description edits along the way. Then it times:

- one measurement of Panels A and B on the final store, and the full health report;
- the whole history measured with shared caches (``measure_history``);
- the baseline: every one of the 140 states measured from scratch, each with a
  fresh ``Measurer`` (what 140 independent single runs cost), measured in this run;
- replaying and verifying every snapshot (``History.verify``).

Usage: ``.venv/bin/python benchmarks/health.py [--seed N] [--kb 612] [--steps 140]``
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from memdir.metrics import Measurer, health_report, measure_history, measure_store
from memdir.store import Store
from memdir.store.history import History

TOPICS = {
    "people": ["alice", "bruno", "chen", "dalia", "emeka", "farah", "goran", "hana"],
    "places": ["lisbon", "porto", "kyoto", "nairobi", "oslo", "quito", "tunis"],
    "work": ["hospital-shifts", "bakery", "studio", "startup", "school", "garage"],
    "hobbies": ["painting", "cello", "climbing", "chess", "gardening", "running"],
    "food": ["recipes", "restaurants", "allergies", "markets", "baking"],
    "health": ["checkups", "sleep", "injuries", "medication"],
    "travel": ["2023-spring-trip", "2024-summer-trip", "2024-winter-trip", "visas"],
    "events": ["weddings", "birthdays", "concerts", "moves", "graduations"],
}
SHARED = ("the a with and on in at for after before during about from their his her "
          "weekend morning evening friend family plan talk said felt").split()
VERBS = "visited cooked painted booked moved joined started finished missed planned".split()
MONTHS = "January February March April May June July August September October November".split()


def _vocab(rng: random.Random, topic: str, name: str) -> list[str]:
    stem = [w for w in name.replace("-", " ").split() if not w.isdigit()]
    own = [f"{topic[:3]}{rng.randrange(1000)}" for _ in range(25)]
    return stem * 3 + own


def _sentence(rng: random.Random, vocab: list[str], session: int, turn: int) -> str:
    words = [rng.choice(vocab) for _ in range(rng.randint(5, 9))]
    words += [rng.choice(SHARED) for _ in range(rng.randint(3, 6))]
    rng.shuffle(words)
    date = f"{rng.randint(1, 28)} {rng.choice(MONTHS)} 2023"
    return (f"{words[0].capitalize()} {rng.choice(VERBS)} {' '.join(words[1:])} on {date} "
            f"[S{session}T{turn}].")


def _pieces(rng: random.Random, target_bytes: int) -> list[tuple[str, str, str]]:
    """(path, heading block, description) pieces whose texts sum to about target_bytes."""
    pieces: list[tuple[str, str, str]] = []
    size = 0
    session = 1
    files = [(t, n) for t, names in TOPICS.items() for n in names]
    rng.shuffle(files)
    round_no = 0
    while size < target_bytes:
        round_no += 1
        for topic, name in files:
            vocab = _vocab(random.Random(f"{topic}/{name}"), topic, name)
            lines = [f"# {name.replace('-', ' ').title()} notes, part {round_no}"]
            for sub in range(rng.randint(1, 3)):
                lines.append(f"## {rng.choice(vocab).title()} {sub + 1}")
                if rng.random() < 0.3:
                    lines.append(f"### Details {sub + 1}")
                for turn in range(rng.randint(2, 5)):
                    lines.append(f"- {_sentence(rng, vocab, session, turn + 1)}")
                session += 1
            if rng.random() < 0.2:
                other_topic, other = rng.choice(files)
                lines.append(f"See /memories/{other_topic}/{other}.md for related notes.")
            block = "\n".join(lines) + "\n"
            desc = f"{name.replace('-', ' ').title()}: {rng.choice(vocab)} and {rng.choice(vocab)}"
            pieces.append((f"/memories/{topic}/{name}.md", block, desc))
            size += len(block.encode())
            if size >= target_bytes:
                break
    return pieces


def _render(path: str, desc: str, blocks: list[str]) -> str:
    stem = path.rsplit("/", 1)[1].removesuffix(".md")
    return f"---\nname: {stem}\ndescription: {desc.replace(':', ' -')}\n---\n" + "".join(blocks)


def build_history(root: Path, seed: int, target_kb: int, steps: int) -> History:
    """Grow a store to about ``target_kb`` KB in ``steps`` snapshots."""
    rng = random.Random(seed)
    pieces = _pieces(rng, target_kb * 1024)
    store = Store(root, create=True)
    history = History(store)
    history.init()
    contents: dict[str, tuple[str, list[str]]] = {}
    renamed: dict[str, str] = {}
    per_step = len(pieces) / steps
    done = 0
    for step in range(steps):
        upto = round((step + 1) * per_step)
        for path, block, desc in pieces[done:upto]:
            live = renamed.get(path, path)
            old_desc, blocks = contents.get(live, (desc, []))
            blocks.append(block)
            contents[live] = (old_desc, blocks)
            store.write(live, _render(live, old_desc, blocks))
        done = upto
        if step % 20 == 19 and contents:  # a reorganisation: rename one file into archive/
            victim = sorted(contents)[rng.randrange(len(contents))]
            if not victim.startswith("/memories/archive/"):
                target = "/memories/archive/" + victim.rsplit("/", 1)[1]
                if target not in contents:
                    store.rename(victim, target)
                    desc, blocks = contents.pop(victim)
                    contents[target] = (desc, blocks)
                    store.write(target, _render(target, desc, blocks))
                    renamed.update({k: target for k, v in renamed.items() if v == victim})
                    renamed[victim] = target
        history.snapshot(f"step {step + 1}: {upto} pieces so far")
    return history


def _timed(label: str, results: dict[str, float], fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = fn()
    results[label] = time.perf_counter() - start
    print(f"{label:<44} {results[label]:8.2f} s", flush=True)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kb", type=int, default=612)
    parser.add_argument("--steps", type=int, default=140)
    args = parser.parse_args()
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-bench-") as scratch:
        history = _timed("build the history (not a metric)", times,
                         lambda: build_history(Path(scratch) / "memories", args.seed,
                                               args.kb, args.steps))
        store = history.store
        # warm the imports (sklearn, scipy) so the first timed call does not pay for them
        measure_store(Store(Path(scratch) / "warm", create=True))
        final = _timed("single run: Panels A+B on the final store", times,
                       lambda: measure_store(store))
        _timed("single run: full health report", times, lambda: health_report(store))
        trajectory = _timed(f"history run: {args.steps} snapshots, shared caches", times,
                            lambda: measure_history(history, measurer=Measurer()))

        def naive() -> None:
            for step in history.steps():
                Measurer().measure(history.read_state(step))

        _timed(f"baseline: {args.steps} states, each from scratch", times, naive)
        report = _timed("verify: replay every snapshot", times, history.verify)
    shape, tax = final.shape, final.taxonomy
    summary = {
        "final_store": {
            "bytes": shape.bytes, "files": shape.files, "folders": shape.folders,
            "sections": shape.sections, "units": shape.units,
            "mean_leaf_depth": shape.mean_leaf_depth, "max_depth": shape.max_depth,
            "b1": tax.b1_distinguishability, "b2": tax.b2_cohesion, "b3": tax.b3_leakage,
            "b4": tax.b4_spearman,
        },
        "steps": len(trajectory.rows),
        "verify_ok": report.ok,
        "seconds": times,
        "ratio_history_to_baseline": times[f"history run: {args.steps} snapshots, shared caches"]
        / times[f"baseline: {args.steps} states, each from scratch"],
        "ratio_history_to_steps_x_single_final": times[
            f"history run: {args.steps} snapshots, shared caches"]
        / (args.steps * times["single run: Panels A+B on the final store"]),
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
