"""Run a curated build of the sample conversation in a child process that hangs mid-chunk.

Usage: python curated_child.py CACHE MARKER HANG_AT. The parent kills it with SIGKILL once
MARKER exists, i.e. after the hanging chunk has written its files.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from builder_models import ChunkWriter

from memdir.builders import build_curated
from memdir.sample import load_sample_conversation


def main() -> None:
    cache, marker, hang_at = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    writer = ChunkWriter(hang_at=hang_at, marker=marker)
    asyncio.run(build_curated(load_sample_conversation(), cache, writer.model()))
    raise SystemExit("the build finished although it should have hung")


if __name__ == "__main__":
    main()
