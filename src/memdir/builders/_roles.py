"""The roles that rebuild a store from another: the reorganizer and the foldering agent.

The curated variant's builder is the management agent, declared with ``ingest``
(:data:`memdir.agents.MANAGEMENT_ROLE`); the catalog names each variant's role.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from memdir.agents import MANAGEMENT_ROLE, WRITE_BUDGET, RoleConfig, declare_role

__all__ = ["BUILDER_ROLES", "FOLDERING_ROLE", "REORGANIZER_ROLE"]

REORGANIZER_ROLE = declare_role(
    "reorganizer", prompt="reorganize-preserve", toolset="write", **WRITE_BUDGET
)
"""Rewrites a built store into a new shape (the reorganized and multi-pass variants)."""
FOLDERING_ROLE = declare_role("foldering", prompt="foldering", toolset="folder", **WRITE_BUDGET)
"""Moves a verbatim dump's files into folders, changing no byte (the foldered variant)."""
BUILDER_ROLES: Final[Mapping[str, RoleConfig]] = {
    role.role: role for role in (MANAGEMENT_ROLE, REORGANIZER_ROLE, FOLDERING_ROLE)
}
"""Every role the catalog's model-built variants run, by name."""
