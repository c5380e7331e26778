"""The offline study at LoCoMo scale: all ten conversations, every evaluated question.

Builds the zero-cost variants (closed-book, chunk retrieval, verbatim dump) for all
ten LoCoMo conversations and answers all 1,540 questions outside the adversarial
category with the offline ``memdir/grep-reader`` policy through ``run_study`` (one
inspect_ai eval per cell: records, evidence replay, grading, eval logs), then
reports wall time and questions per second.

Baselines, measured in the same run on the verbatim variant alone (the same 1,540
answers each):

- ``run_study``, as above;
- the same per-question work (``CellRun.answer`` and the record write, eight at a
  time) with no inspect_ai eval around it, which is what the study did before its
  cells became evals: the ratio to it is the eval's own cost (samples, transcripts,
  the log file);
- the bare ``ask`` calls: the ratio to them is everything the study adds.

Run: MEMDIR_DATA_DIR=../shared/data .venv/bin/python benchmarks/study.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from memdir.agents import PriceTable, ask
from memdir.bench import Question, load_benchmark
from memdir.builders import build_verbatim
from memdir.config import get_settings
from memdir.store import Store
from memdir.study import StudyConfig, build_store, cell_input, load_run, run_study, write_report
from memdir.study._answer import CellRun

CONCURRENCY = 8


async def _bare(data_dir: Path, root: Path) -> tuple[int, float]:
    dataset = load_benchmark("locomo", data_dir)
    jobs: list[tuple[Store, str]] = []
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


async def _no_eval(config: StudyConfig, data_dir: Path, root: Path) -> tuple[int, float]:
    prices = PriceTable.load()
    semaphore = asyncio.Semaphore(CONCURRENCY)
    answers = 0
    start = time.perf_counter()
    for cell in config.cells():
        inputs = cell_input(cell, data_dir)
        store, _ = await build_store(cell, inputs.conversation, root / "stores", config, {},
                                     prices)
        run = CellRun(cell, config, store, {}, prices, root / cell.key)

        async def one(run: CellRun, question: Question) -> None:
            async with semaphore:
                record = await run.answer(question, False)
            run.write(record, question)

        await asyncio.gather(*(one(run, q) for q in inputs.questions))
        answers += len(inputs.questions)
    return answers, time.perf_counter() - start


def _config(data_dir: Path, ids: list[str], variants: list[str]) -> StudyConfig:
    return StudyConfig.model_validate({
        "name": "locomo-offline", "data_dir": str(data_dir),
        "benchmarks": [{"name": "locomo", "conversations": ids}],
        "variants": variants, "search": {"models": ["memdir/grep-reader"]},
        "concurrency": CONCURRENCY,
    })


def _timed_run(config: StudyConfig, out: Path) -> tuple[int, int, int, float]:
    start = time.perf_counter()
    statuses = run_study(config, out)
    wall = time.perf_counter() - start
    complete = sum(1 for s in statuses if s.status == "complete")
    return sum(s.answered for s in statuses), complete, len(statuses), wall


def main() -> None:
    """Run the benchmark and print its figures."""
    data_dir = get_settings().data_dir
    if data_dir is None or not (Path(data_dir) / "locomo" / "locomo10.json").exists():
        sys.exit("set MEMDIR_DATA_DIR to a folder holding locomo/locomo10.json")
    data = Path(data_dir)
    ids = [c.id for c in load_benchmark("locomo", data).conversations]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        answers, complete, cells, wall = _timed_run(
            _config(data, ids, ["closed-book", "chunk", "verbatim"]), root / "all")
        write_report(root / "all")
        run = load_run(root / "all")
        verbatim = [r for s in run.complete if s.cell.variant == "verbatim"
                    for r in run.records[s.cell.key]]
        verbatim_only = _config(data, ids, ["verbatim"])
        v_answers, _, _, v_wall = _timed_run(verbatim_only, root / "v")
        plain_n, plain_wall = asyncio.run(_no_eval(verbatim_only, data, root / "plain"))
        bare_n, bare_wall = asyncio.run(_bare(data, root / "bare"))
    print(f"full run: {complete}/{cells} cells complete, {answers} answers "
          f"({answers // 3} questions x 3 variants) in {wall:.1f} s wall, "
          f"{answers / wall:.1f} answers/s, {answers / 3 / wall:.1f} questions/s "
          "(builds, grading, records included)")
    print(f"verbatim only: run_study {v_answers} answers in {v_wall:.1f} s "
          f"({v_answers / v_wall:.1f}/s); the same work without an eval {plain_n} in "
          f"{plain_wall:.1f} s ({plain_n / plain_wall:.1f}/s); bare ask {bare_n} in "
          f"{bare_wall:.1f} s ({bare_n / bare_wall:.1f}/s)")
    print(f"ratios of wall time: eval/no-eval {v_wall / plain_wall:.2f}x, "
          f"study/bare ask {v_wall / bare_wall:.2f}x")
    f1 = sum(r.grades.f1 or 0.0 for r in verbatim) / max(1, len(verbatim))
    seen = sum(1 for r in verbatim if r.evidence_seen) / max(1, len(verbatim))
    print(f"verbatim, all ten conversations: mean token F1 {f1:.3f}, evidence seen {seen:.1%}")


if __name__ == "__main__":
    main()
