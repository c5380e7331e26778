"""Store builders of the study's memory variants.

The verbatim dump and the chunk store are rendered from a loaded conversation
(:mod:`memdir.conversation`) at no model cost; closed-book builds nothing. The
foldered, reorganized and curated stores are written by a model, unit by unit,
in a build folder keyed by their whole configuration, so a finished build is
reused and an interrupted one resumes (see docs/builders.md).
"""

from memdir.builders._curated import build_curated
from memdir.builders._episodes import BuiltStore
from memdir.builders._folder import BuildFolder, BuildState, reset_to_last_snapshot
from memdir.builders._foldered import build_foldered
from memdir.builders._key import BuildSpec, builder_role, conversation_hash
from memdir.builders._record import (
    BUILD_RECORD_VERSION,
    BuildError,
    BuildRecord,
    Move,
    UnitRecord,
    Variant,
)
from memdir.builders._reorganized import DEFAULT_MAX_PASSES, build_reorganized
from memdir.builders._variants import MODEL_BUILT, build_model_variant
from memdir.builders._verify import FolderingReport, verify_foldering
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
    "DEFAULT_MAX_PASSES",
    "MODEL_BUILT",
    "BuildError",
    "BuildFolder",
    "BuildRecord",
    "BuildSpec",
    "BuildState",
    "BuiltStore",
    "FolderingReport",
    "Move",
    "UnitRecord",
    "Variant",
    "build_chunk_store",
    "build_closed_book",
    "build_curated",
    "build_foldered",
    "build_model_variant",
    "build_reorganized",
    "build_verbatim",
    "builder_role",
    "chunk_files",
    "conversation_hash",
    "reset_to_last_snapshot",
    "session_file",
    "verbatim_files",
    "verify_foldering",
]
