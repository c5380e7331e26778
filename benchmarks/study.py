"""The offline study at LoCoMo scale: all ten conversations, every evaluated question.

Builds the zero-cost variants (closed-book, chunk retrieval, verbatim dump) for all
ten LoCoMo conversations and answers all 1,540 questions outside the adversarial
category with the offline ``memdir/grep-reader`` policy through ``run_study``
(records, evidence replay, grading), then reports wall time and questions per
second.

Baseline, measured in the same run: the bare ``ask`` calls on the same verbatim
stores, with no study machinery around them. The ratio is what the study adds
per question (store builds, records, replaying tool calls for the diagnostics,
grading, writing JSON).

Run: MEMDIR_DATA_DIR=../shared/data .venv/bin/python benchmarks/study.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from memdir.agents import ask
from memdir.bench import load_benchmark
from memdir.builders import build_verbatim
from memdir.config import get_settings
from memdir.store import Store
from memdir.study import StudyConfig, load_run, run_study, write_report

CONCURRENCY = 8


async def _bare(data_dir: Path, root: Path) -> tuple[int, float]:
    dataset = load_benchmark("locomo", data_dir)
    jobs = []
    for conversation in dataset.conversations:
        store = Store(root / conversation.id / "memories", create=True)
        build_verbatim(conversation, store)
        jobs.extend((store, q.text) for q in dataset.questions_for(conversation.id))
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def one(store: Store, text: str) -> None:
        async with semaphore:
            await ask(store, text, variant="flat")

    start = time.perf_counter()
    await asyncio.gather(*(one(s, t) for s, t in jobs))
    return len(jobs), time.perf_counter() - start


def main() -> None:
    """Run the benchmark and print its figures."""
    data_dir = get_settings().data_dir
    if data_dir is None or not (Path(data_dir) / "locomo" / "locomo10.json").exists():
        sys.exit("set MEMDIR_DATA_DIR to a folder holding locomo/locomo10.json")
    ids = [c.id for c in load_benchmark("locomo", data_dir).conversations]
    config = StudyConfig.model_validate({
        "name": "locomo-offline", "data_dir": str(data_dir),
        "benchmarks": [{"name": "locomo", "conversations": ids}],
        "variants": ["closed-book", "chunk", "verbatim"],
        "search": {"models": ["memdir/grep-reader"]}, "concurrency": CONCURRENCY,
    })
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        start = time.perf_counter()
        statuses = run_study(config, out)
        wall = time.perf_counter() - start
        answered = sum(s.answered for s in statuses)
        complete = sum(1 for s in statuses if s.status == "complete")
        write_report(out)
        run = load_run(out)
        verbatim = [r for s in run.complete if s.cell.variant == "verbatim"
                    for r in run.records[s.cell.key]]
        bare_n, bare_wall = asyncio.run(_bare(Path(data_dir), Path(tmp) / "bare"))
    study_rate = answered / wall
    bare_rate = bare_n / bare_wall
    print(f"cells: {complete}/{len(statuses)} complete; {answered} answers "
          f"({answered // 3} questions x 3 variants)")
    print(f"study run: {wall:.1f} s wall, {study_rate:.1f} answers/s (builds included)")
    print(f"baseline, bare ask on the verbatim stores: {bare_n} answers in {bare_wall:.1f} s, "
          f"{bare_rate:.1f} answers/s")
    print(f"ratio study/bare per answer: {bare_rate / study_rate:.2f}x")
    f1 = sum(r.grades.f1 or 0.0 for r in verbatim) / max(1, len(verbatim))
    seen = sum(1 for r in verbatim if r.evidence_seen) / max(1, len(verbatim))
    print(f"verbatim, all ten conversations: mean token F1 {f1:.3f}, evidence seen {seen:.1%}")


if __name__ == "__main__":
    main()
