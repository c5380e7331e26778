"""The skill setting's roles: the curator, the retriever and the execution agent."""

from __future__ import annotations

from memdir.agents import SEARCH_BUDGET, WRITE_BUDGET, declare_role

__all__ = ["CURATOR_ROLE", "EXECUTION_ROLE", "RETRIEVER_ROLE"]

CURATOR_ROLE = declare_role("curator", prompt="curator", toolset="write", **WRITE_BUDGET)
"""Writes what a task attempt taught into the skill library."""
RETRIEVER_ROLE = declare_role("retriever", prompt="retriever-cite", toolset="read",
                              **SEARCH_BUDGET)
"""Finds the library's files that bear on the next task, and cites them."""
EXECUTION_ROLE = declare_role("execution", prompt="execution", toolset=None, max_rounds=50,
                              max_tokens=8192, temperature=0.0)
"""Plays an ALFWorld game, one action a turn, at temperature 0."""
