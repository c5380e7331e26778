"""The run layer shared by the study and the skill setting.

Both settings run cells (each named by its ``key``) and keep what they did as
records. This package holds what the two have in common: the record base with
one version field, written atomically (:class:`RunRecord`, :func:`write_record`);
the pinning of a run's inputs (:func:`pin_inputs`); the report table renderer
(:class:`Table`, from :mod:`memdir.tables`); and hosting run work as inspect_ai
evals (:func:`run_eval`, :func:`eval_work`, :class:`InOrder`), so ``inspect
view`` shows a skill chain's attempts as it shows a study cell's questions.

It sits above ``agents`` and below ``study`` and ``skills``.
"""

from memdir.runs._evals import (
    EVAL_SETTINGS,
    NO_MODEL,
    EvalFailed,
    InOrder,
    eval_failure,
    eval_work,
    note_eval,
    quiet_display,
    realtime,
    run_eval,
)
from memdir.runs._pins import (
    MANIFEST,
    MANIFEST_VERSION,
    PACKAGES,
    RunManifest,
    RunPins,
    ToolsetFactory,
    file_hashes,
    package_versions,
    pin_inputs,
    prompt_hash,
    read_manifest,
    write_manifest,
)
from memdir.runs._records import RunRecord, read_record, write_json, write_record
from memdir.tables import MISSING, Table, Value, fmt

__all__ = [
    "EVAL_SETTINGS",
    "MANIFEST",
    "MANIFEST_VERSION",
    "MISSING",
    "NO_MODEL",
    "PACKAGES",
    "EvalFailed",
    "InOrder",
    "RunManifest",
    "RunPins",
    "RunRecord",
    "Table",
    "ToolsetFactory",
    "Value",
    "eval_failure",
    "eval_work",
    "file_hashes",
    "fmt",
    "note_eval",
    "package_versions",
    "pin_inputs",
    "prompt_hash",
    "quiet_display",
    "read_manifest",
    "read_record",
    "realtime",
    "run_eval",
    "write_json",
    "write_manifest",
    "write_record",
]
