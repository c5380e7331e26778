"""One run of ``memdir study run configs/offline-smoke.yaml``, shared by the tests that need it.

docs/study.md's first block runs the offline smoke study as a person would, and
tests/study/test_offline_smoke_figures.py checks the figures that doc gives
against a real run of the same study. Each ran it whole (six cells, 729 questions,
a minute or more of both cores) until they shared this one run: the
``offline_smoke_run`` fixture (tests/conftest.py) runs the doc's line, once per
session, in a fresh folder with ``configs`` beside it, and both tests share an
xdist group so that one worker makes it.

The run gets a generous tool time limit (``MEMDIR_TOOL_TIME_LIMIT=120``): the
figures are those of a run in which no grep hit its 5 s limit, which on a heavily
loaded machine a plain grep can (the limit counts wall time).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
"""The data folder as tests/test_docs_examples.py fills the docs' ``~/memdir-data``."""
OUT = "runs/offline-smoke"
ARGS = ("study", "run", "configs/offline-smoke.yaml", "--data", str(DATA), "--out", OUT)
"""docs/study.md's line, its data folder filled, after ``memdir``."""
GROUP = "offline_smoke_run"
"""The xdist group of the tests that read the shared run."""
TIME_LIMIT = "120"


@dataclass(frozen=True)
class OfflineSmokeRun:
    folder: Path
    """Where the line ran: the run is ``folder / OUT``."""
    done: subprocess.CompletedProcess[str]

    @property
    def run(self) -> Path:
        return self.folder / OUT


def make(folder: Path) -> OfflineSmokeRun:
    """Run the line in ``folder`` (made fresh), as the docs test runs a shell line."""
    (folder / "configs").symlink_to(REPO / "configs")  # as in the repository's root
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env |= {"MEMDIR_DATA_DIR": str(DATA), "MEMDIR_TOOL_TIME_LIMIT": TIME_LIMIT}
    done = subprocess.run([sys.executable, "-m", "memdir", *ARGS], cwd=folder, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=1200, check=False)
    return OfflineSmokeRun(folder, done)
