"""Run ``ingest`` of the sample conversation in a child process that hangs mid-chunk.

Usage: python ingest_child.py STORE MARKER HANG_AT. The parent kills it with SIGKILL once
MARKER exists, i.e. after the hanging chunk has written its files.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "builders"), str(TESTS)]

from builder_models import ChunkWriter  # noqa: E402 (needs the path above)

from memdir.agents import ingest  # noqa: E402
from memdir.sample import load_sample_conversation  # noqa: E402
from memdir.store import Store  # noqa: E402


def main() -> None:
    store, marker, hang_at = Store(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    writer = ChunkWriter(hang_at=hang_at, marker=marker)
    asyncio.run(ingest(load_sample_conversation(), store, writer.model()))
    raise SystemExit("the ingest finished although it should have hung")


if __name__ == "__main__":
    main()
