"""grep speed: memdir's grep over a 5,000-file / ~20 MB store against GNU ``grep -rn``.

Builds a synthetic store in a temporary folder, then times each pattern with
GNU grep (the baseline, measured in the same run) and with memdir's grep
(the search alone, and the whole tool call including formatting). Reports the
best of several runs and the ratio to the baseline; the target is <= 3x.

Run: ``.venv/bin/python benchmarks/grep_speed.py [--files 5000] [--kb 4]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memdir.store import Store
from memdir.tools._grep import grep_store
from memdir.tools._memory import read_set

WORDS = (
    "alice bob carol dave meeting project deadline coffee tea paris london trip budget "
    "report family birthday dinner weekend hiking music guitar piano doctor appointment "
    "school teacher garden dog cat travel flight hotel museum book novel movie friend "
    "work manager promotion salary house move city river mountain lake summer winter"
).split()

PATTERNS = [
    ("rare literal", "zanzibar", False),
    ("common word", "coffee", False),
    ("alternation", "birthday|anniversary", False),
    ("ignore case", "paris", True),
    ("regex class", r"\b20[0-9]{2}-[0-9]{2}\b", False),
    ("frontmatter", "^description:", False),
]


def build(root: Path, files: int, kb: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    total = 0
    for index in range(files):
        folder = root / f"topic-{index % 50:02d}" / f"sub-{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"---\nname: note-{index}\ndescription: Notes on {rng.choice(WORDS)}\n---"]
        size = 0
        while size < kb * 1024:
            words = rng.choices(WORDS, k=rng.randint(6, 14))
            if rng.random() < 0.02:
                words.append(f"{rng.randint(2000, 2030)}-{rng.randint(10, 12)}")
            if rng.random() < 0.0005:
                words.append("Zanzibar")
            line = " ".join(words)
            lines.append(line.capitalize() + ".")
            size += len(line) + 2
        data = ("\n".join(lines) + "\n").encode()
        (folder / f"note-{index}.md").write_bytes(data)
        total += len(data)
    return total


def best(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--kb", type=int, default=4, help="approximate size of each file")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    gnu = shutil.which("grep")
    if gnu is None:
        raise SystemExit("GNU grep is not on PATH; it is the baseline.")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        root.mkdir()
        size = build(root, args.files, args.kb)
        store = Store(root)
        tools = read_set(store)
        print(f"store: {args.files} files, {size / 1e6:.1f} MB")
        print(f"{'pattern':<14} {'hits':>7} {'grep -rn':>9} {'memdir':>8} {'ratio':>6} "
              f"{'tool':>8} {'ratio':>6}")
        worst = 0.0
        for label, pattern, ignore_case in PATTERNS:
            cmd = [gnu, "-rnE", "--include=*.md", pattern, str(root)]
            if ignore_case:
                cmd.insert(1, "-i")
            base = best(lambda c=cmd: subprocess.run(c, capture_output=True), args.repeats)
            hits = sum(1 for _ in grep_store(store, pattern, ignore_case=ignore_case))
            ours = best(lambda p=pattern, i=ignore_case: sum(
                1 for _ in grep_store(store, p, ignore_case=i)), args.repeats)
            call = {"pattern": pattern, "ignore_case": ignore_case, "max_results": 50}
            tool = best(lambda c=call: asyncio.run(tools.call("grep", c)), args.repeats)
            worst = max(worst, ours / base, tool / base)
            print(f"{label:<14} {hits:>7} {base * 1000:>7.0f}ms {ours * 1000:>6.0f}ms "
                  f"{ours / base:>5.1f}x {tool * 1000:>6.0f}ms {tool / base:>5.1f}x")
        print(f"worst ratio to GNU grep: {worst:.1f}x (target <= 3x)")


if __name__ == "__main__":
    main()
