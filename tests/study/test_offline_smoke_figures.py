"""The figures docs/study.md gives for the offline smoke run are what a real run measures.

The test reads the run ``memdir study run configs/offline-smoke.yaml`` makes whole in
a subprocess (six cells, 729 questions, the offline grep-reader: no model, about a
minute on one core): the run of docs/study.md's first block, which the docs test
runs as well, made once for both (tests/offline_smoke.py). It then reads the section
"Offline smoke, measured" of docs/study.md and compares every figure it gives with
the run's records: token F1 x 100 per benchmark and variant, the share of the
verbatim dump's questions whose evidence the reader saw, and that it cites the
evidence for under half of them. A change that moves a figure fails here
until the docs say what runs measure.

The figures are those of a run in which no tool call hits its time limit. On a
heavily loaded machine a plain grep can (its 5 s limit counts wall time), and the
lost call moves a figure; so the run gets a generous limit and the test checks that
no call was stopped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memdir.study import QuestionRecord, load_run
from offline_smoke import GROUP, OfflineSmokeRun

# the whole offline smoke run, about a minute, shared with docs/study.md's block
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP)]

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ("closed-book", "chunk", "verbatim")
_F1 = re.compile(r"Token F1 x 100: LoCoMo (?P<locomo>[\d. /]+), REALTALK (?P<realtalk>[\d. /]+)"
                 r"\s*\(closed-book / chunk / verbatim\)")
_SEEN = re.compile(r"sees the evidence of (?P<locomo>\d+) % \(LoCoMo\)\s+and "
                   r"(?P<realtalk>\d+) % \(REALTALK\) of the questions in the verbatim dump "
                   r"but cites it for under\s+half")


def _section() -> str:
    text = (ROOT / "docs" / "study.md").read_text(encoding="utf-8")
    start = text.index("## Offline smoke, measured")
    return " ".join(text[start:text.index("\n## ", start + 1)].split())


def _cell(records: dict[str, list[QuestionRecord]], benchmark: str,
          variant: str) -> list[QuestionRecord]:
    [key] = [k for k in records if k.startswith(f"{benchmark}__") and f"__{variant}__" in k]
    return records[key]


def _f1(records: list[QuestionRecord]) -> str:
    scores = [r.grades.f1 for r in records]
    assert all(s is not None for s in scores)
    return f"{100 * sum(s for s in scores if s is not None) / len(scores):.1f}"


def test_the_documented_figures_are_a_real_runs(offline_smoke_run: OfflineSmokeRun) -> None:
    section = _section()
    f1, seen = _F1.search(section), _SEEN.search(section)
    assert f1 is not None and seen is not None, "docs/study.md changed the figures' sentence"
    result = offline_smoke_run.done
    assert result.returncode == 0, result.stdout + result.stderr
    records = load_run(offline_smoke_run.run).records
    assert len(records) == 6
    stopped = [r.question_id for rs in records.values() for r in rs
               for call in r.episode.calls for t in call.tool_calls
               if t.is_error and "time limit" in (t.result or "")]
    assert stopped == []
    for benchmark in ("locomo", "realtalk"):
        measured = [_f1(_cell(records, benchmark, v)) for v in VARIANTS]
        documented = [v.strip() for v in f1[benchmark].split("/")]
        assert measured == documented, (benchmark, measured, documented)
        verbatim = [r for r in _cell(records, benchmark, "verbatim") if r.evidence]
        saw = sum(bool(r.evidence_seen) for r in verbatim)
        cited = sum(bool(r.evidence_cited) for r in verbatim)
        assert f"{100 * saw / len(verbatim):.0f}" == seen[benchmark], (benchmark, saw)
        assert cited < len(verbatim) / 2 < saw, (benchmark, cited, saw)
