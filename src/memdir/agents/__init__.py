"""Agents on any model, through inspect_ai's model layer.

The roles and their prompts, one tool loop with visible, time-bounded retries,
usage and cost records, provider profiles, compute bounds, the offline search
policy, and ``ingest`` / ``ask``.

Importing this package registers the ``memdir/grep-reader`` inspect_ai model.
"""

from memdir.agents import _providers  # noqa: F401  (registers memdir/grep-reader)
from memdir.agents._ask import (
    SEARCH_FAMILIES,
    SEARCH_VARIANTS,
    Answer,
    SearchFamily,
    SearchVariant,
    ask,
    search_family_role,
)
from memdir.agents._bounds import ComputeBounds, cell_bounds, episode_bounds
from memdir.agents._calls import CallFailed, call_model, describe_error
from memdir.agents._citations import Citation, find_citations, render_cited, resolve_citations
from memdir.agents._ingest import (
    MANAGEMENT_ROLE,
    ChunkOutcome,
    IngestError,
    IngestResult,
    ingest,
    recover_ingest,
)
from memdir.agents._loop import FINAL_REQUEST, AgentError, AgentRun, run_agent, tool_infos
from memdir.agents._models import OFFLINE_MODEL, ModelSetupError, resolve_model
from memdir.agents._offline import BASELINE_LABEL
from memdir.agents._prices import ModelPrice, PriceTable
from memdir.agents._profiles import (
    PROFILES,
    ProviderProfile,
    is_offline,
    is_policy,
    profile,
)
from memdir.agents._prompts import Prompt, load_prompt, prompt_blocks, prompt_fields, prompt_names
from memdir.agents._records import (
    RESULT_CHARS,
    SCHEMA_VERSION,
    CallRecord,
    EpisodeRecord,
    ToolCallRecord,
)
from memdir.agents._roles import (
    SEARCH_BUDGET,
    SEARCH_ROLE,
    WRITE_BUDGET,
    RoleConfig,
    declare_role,
    declared_roles,
    role_config,
)
from memdir.agents._snapshot import StoreSnapshot, restore, snapshot
from memdir.agents._usage import Usage, usage_from_inspect

__all__ = [
    "BASELINE_LABEL",
    "FINAL_REQUEST",
    "MANAGEMENT_ROLE",
    "OFFLINE_MODEL",
    "PROFILES",
    "RESULT_CHARS",
    "SEARCH_BUDGET",
    "SEARCH_ROLE",
    "SCHEMA_VERSION",
    "SEARCH_FAMILIES",
    "SEARCH_VARIANTS",
    "AgentError",
    "AgentRun",
    "Answer",
    "CallFailed",
    "CallRecord",
    "ChunkOutcome",
    "Citation",
    "ComputeBounds",
    "EpisodeRecord",
    "IngestError",
    "IngestResult",
    "ModelPrice",
    "ModelSetupError",
    "PriceTable",
    "ProviderProfile",
    "Prompt",
    "RoleConfig",
    "SearchFamily",
    "SearchVariant",
    "StoreSnapshot",
    "ToolCallRecord",
    "Usage",
    "ask",
    "call_model",
    "cell_bounds",
    "describe_error",
    "episode_bounds",
    "find_citations",
    "ingest",
    "is_offline",
    "is_policy",
    "load_prompt",
    "prompt_blocks",
    "profile",
    "prompt_fields",
    "prompt_names",
    "recover_ingest",
    "render_cited",
    "resolve_citations",
    "resolve_model",
    "restore",
    "role_config",
    "declare_role",
    "declared_roles",
    "WRITE_BUDGET",
    "run_agent",
    "search_family_role",
    "snapshot",
    "tool_infos",
    "usage_from_inspect",
]
