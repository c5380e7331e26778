"""The skill setting: ALFWorld tasks played in chains by an execution policy.

``list_tasks`` reads the games of a split from a path; ``full_chain_order`` and
``three_chain_orders`` fix the protocols' task orders; ``AlfworldEnv`` plays a
game; ``ExpertPolicy`` is ALFWorld's handcoded expert behind the ``Policy``
protocol a model-driven execution agent also implements; ``run_chain`` plays a
chain and records one ``Trajectory`` per task, resumably.

On top of that: the memory variants (``make_variant``), the outcome gate the
curator writes through (``GatedLibrary``), the library audits, the model-driven
execution agent (``ModelPolicy``), run configs (``RunConfig``), the cell runner
with per-task snapshots (``run_cell``, each chain an inspect_ai eval whose samples
are its task attempts) and reports from its records.
"""

from memdir.skills._audit import AuditFinding, audit_gate, audit_library, audit_schema
from memdir.skills._chain import (
    ChainManifest,
    ChainMismatchError,
    ChainPlayer,
    load_records,
    run_chain,
    run_episode,
    success_by_family,
)
from memdir.skills._config import EXPERT, SPLIT, Cell, PaperCells, RunConfig, load_config
from memdir.skills._env import (
    DEFAULT_MAX_STEPS,
    AlfworldEnv,
    EnvError,
    StepResult,
    alfworld_missing,
)
from memdir.skills._execution import NO_GUIDANCE, Compaction, ModelPolicy, parse_action
from memdir.skills._expert import ExpertPolicy, to_legacy, to_move
from memdir.skills._families import (
    CHAIN_COUNT,
    FAMILIES,
    AlfworldTask,
    family_of,
    full_chain_order,
    list_tasks,
    order_digest,
    read_goal,
    three_chain_orders,
)
from memdir.skills._gate import Attempt, GatedLibrary, gate_problem
from memdir.skills._manifest import pin_run
from memdir.skills._policy import GiveUp, Policy, Step
from memdir.skills._report import CellReport, build_report, load_run
from memdir.skills._run import (
    STEP_SCHEMA,
    ServedRecord,
    StepRecord,
    chains_for,
    load_steps,
    log_dir,
    run_cell,
)
from memdir.skills._trajectory import TRAJECTORY_SCHEMA, Trajectory, render_trajectory
from memdir.skills._variants import (
    EPISODES,
    NO_EXPERIENCE,
    VARIANT_NAMES,
    CuratedVariant,
    EpisodeLogVariant,
    Integrated,
    NoStoreVariant,
    Served,
    Variant,
    VariantName,
    make_variant,
)

__all__ = [
    "CHAIN_COUNT",
    "DEFAULT_MAX_STEPS",
    "EPISODES",
    "EXPERT",
    "FAMILIES",
    "NO_EXPERIENCE",
    "NO_GUIDANCE",
    "SPLIT",
    "STEP_SCHEMA",
    "TRAJECTORY_SCHEMA",
    "VARIANT_NAMES",
    "AlfworldEnv",
    "AlfworldTask",
    "Attempt",
    "AuditFinding",
    "Cell",
    "CellReport",
    "ChainManifest",
    "ChainPlayer",
    "ChainMismatchError",
    "Compaction",
    "CuratedVariant",
    "EnvError",
    "EpisodeLogVariant",
    "ExpertPolicy",
    "GatedLibrary",
    "GiveUp",
    "Integrated",
    "ModelPolicy",
    "NoStoreVariant",
    "PaperCells",
    "Policy",
    "RunConfig",
    "Served",
    "ServedRecord",
    "Step",
    "StepRecord",
    "StepResult",
    "Trajectory",
    "Variant",
    "VariantName",
    "alfworld_missing",
    "audit_gate",
    "audit_library",
    "audit_schema",
    "build_report",
    "chains_for",
    "family_of",
    "full_chain_order",
    "gate_problem",
    "list_tasks",
    "load_config",
    "load_records",
    "load_run",
    "load_steps",
    "log_dir",
    "make_variant",
    "order_digest",
    "pin_run",
    "parse_action",
    "read_goal",
    "render_trajectory",
    "run_cell",
    "run_chain",
    "run_episode",
    "success_by_family",
    "three_chain_orders",
    "to_legacy",
    "to_move",
]
