"""Store builders of the study's memory variants; here the ones that cost no model call.

The verbatim dump and the chunk store are rendered from a loaded conversation
(:mod:`memdir.conversation`); closed-book builds nothing.
"""

from memdir.builders._record import BUILD_RECORD_VERSION, BuildRecord, Variant
from memdir.builders._zero_cost import (
    CHUNK_FOLDER,
    build_chunk_store,
    build_closed_book,
    build_verbatim,
    chunk_files,
    session_file,
    verbatim_files,
)

__all__ = [
    "BUILD_RECORD_VERSION",
    "CHUNK_FOLDER",
    "BuildRecord",
    "Variant",
    "build_chunk_store",
    "build_closed_book",
    "build_verbatim",
    "chunk_files",
    "session_file",
    "verbatim_files",
]
