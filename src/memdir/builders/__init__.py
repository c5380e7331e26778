"""Store builders of the study's memory variants.

The verbatim dump and the chunk store are rendered from a loaded conversation
(:mod:`memdir.conversation`) at no model cost; closed-book builds nothing. The
foldered, reorganized and curated stores are written by a model, unit by unit,
in a build folder keyed by their whole configuration, so a finished build is
reused and an interrupted one resumes (see docs/builders.md).

The variant catalog (:data:`CATALOG`) is plain data and imported at once; the
builders load inspect_ai, so they are imported on first use: the command line
can list the variants without loading a model layer.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from memdir.builders._catalog import (
    CATALOG,
    HARNESS,
    MODEL_BUILT,
    OLD_VARIANT_NAMES,
    VARIANTS,
    TurnTemplate,
    VariantName,
    VariantSpec,
    unknown_variant_message,
    variant_hint,
    variant_spec,
)

if TYPE_CHECKING:
    from memdir.builders._curated import build_curated
    from memdir.builders._episodes import BuiltStore
    from memdir.builders._folder import BuildFolder, BuildState
    from memdir.builders._foldered import build_foldered
    from memdir.builders._key import BuildSpec, builder_role, conversation_hash
    from memdir.builders._record import (
        BUILD_RECORD_VERSION,
        BuildError,
        BuildRecord,
        Move,
        UnitRecord,
    )
    from memdir.builders._reorganized import DEFAULT_MAX_PASSES, build_reorganized
    from memdir.builders._roles import BUILDER_ROLES, FOLDERING_ROLE, REORGANIZER_ROLE
    from memdir.builders._variants import BUILDERS, BuiltVariant, build_variant
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

_LAZY: dict[str, tuple[str, ...]] = {
    "_curated": ("build_curated",),
    "_episodes": ("BuiltStore",),
    "_folder": ("BuildFolder", "BuildState"),
    "_foldered": ("build_foldered",),
    "_key": ("BuildSpec", "builder_role", "conversation_hash"),
    "_record": ("BUILD_RECORD_VERSION", "BuildError", "BuildRecord", "Move", "UnitRecord"),
    "_reorganized": ("DEFAULT_MAX_PASSES", "build_reorganized"),
    "_roles": ("BUILDER_ROLES", "FOLDERING_ROLE", "REORGANIZER_ROLE"),
    "_variants": ("BUILDERS", "BuiltVariant", "build_variant"),
    "_verify": ("FolderingReport", "verify_foldering"),
    "_zero_cost": ("CHUNK_FOLDER", "build_chunk_store", "build_closed_book", "build_verbatim",
                   "chunk_files", "session_file", "verbatim_files"),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'memdir.builders' has no attribute {name!r}")
    value = getattr(import_module(f"memdir.builders.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BUILDERS",
    "BUILDER_ROLES",
    "BUILD_RECORD_VERSION",
    "CATALOG",
    "CHUNK_FOLDER",
    "DEFAULT_MAX_PASSES",
    "FOLDERING_ROLE",
    "HARNESS",
    "MODEL_BUILT",
    "OLD_VARIANT_NAMES",
    "REORGANIZER_ROLE",
    "VARIANTS",
    "BuildError",
    "BuildFolder",
    "BuildRecord",
    "BuildSpec",
    "BuildState",
    "BuiltStore",
    "BuiltVariant",
    "FolderingReport",
    "Move",
    "TurnTemplate",
    "UnitRecord",
    "VariantName",
    "VariantSpec",
    "build_chunk_store",
    "build_closed_book",
    "build_curated",
    "build_foldered",
    "build_reorganized",
    "build_variant",
    "build_verbatim",
    "builder_role",
    "chunk_files",
    "conversation_hash",
    "session_file",
    "unknown_variant_message",
    "variant_hint",
    "variant_spec",
    "verbatim_files",
    "verify_foldering",
]
