"""A benchmark's baseline from another source tree, measured in the same run.

A benchmark that compares memdir's code with an older version runs itself
again in a subprocess whose ``PYTHONPATH`` puts the other ``src/`` folder first
(e.g. the worktree of an older commit), asks for ``--json``, and reads the result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_baseline_options", "measure_baseline"]


def add_baseline_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--baseline-src`` and ``--json`` (the form the subprocess answers in)."""
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="a src/ folder of other memdir code to measure the same way")
    parser.add_argument("--json", action="store_true", help="print the results as JSON only")


def measure_baseline(script: str, src: Path | None, args: list[str]) -> Any:
    """``script`` run with ``args`` and ``--json`` on the code in ``src``; None without one."""
    if src is None:
        return None
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    done = subprocess.run([sys.executable, script, *args, "--json"], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)
