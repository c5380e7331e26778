"""The skill setting: ALFWorld tasks played in chains by an execution policy.

``list_tasks`` reads the games of a split from a path; ``full_chain_order`` and
``three_chain_orders`` fix the protocols' task orders; ``AlfworldEnv`` plays a
game; ``ExpertPolicy`` is ALFWorld's handcoded expert behind the ``Policy``
protocol a model-driven execution agent also implements; ``run_chain`` plays a
chain and records one ``Trajectory`` per task, resumably.
"""

from memdir.skills._chain import (
    ChainManifest,
    ChainMismatchError,
    load_records,
    run_chain,
    run_episode,
    success_by_family,
)
from memdir.skills._env import (
    DEFAULT_MAX_STEPS,
    AlfworldEnv,
    EnvError,
    StepResult,
    alfworld_missing,
)
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
from memdir.skills._policy import GiveUp, Policy, Step
from memdir.skills._trajectory import TRAJECTORY_SCHEMA, Trajectory, render_trajectory

__all__ = [
    "CHAIN_COUNT",
    "DEFAULT_MAX_STEPS",
    "FAMILIES",
    "TRAJECTORY_SCHEMA",
    "AlfworldEnv",
    "AlfworldTask",
    "ChainManifest",
    "ChainMismatchError",
    "EnvError",
    "ExpertPolicy",
    "GiveUp",
    "Policy",
    "Step",
    "StepResult",
    "Trajectory",
    "alfworld_missing",
    "family_of",
    "full_chain_order",
    "list_tasks",
    "load_records",
    "order_digest",
    "read_goal",
    "render_trajectory",
    "run_chain",
    "run_episode",
    "success_by_family",
    "three_chain_orders",
    "to_legacy",
    "to_move",
]
