"""Tool sets over a memory store, served to models through function calling.

Sets: ``write`` (the memory command set plus grep), ``read`` (view, grep, toc,
section_read), ``bm25`` (read plus ranked whole-file search), ``bm25-write`` and
``bm25-folder`` (write and folder plus that search), ``chunk`` (one top-3 chunk
retriever), ``shell`` (one writable bash tool), ``shell-read`` (the same bash
over a read-only store) and ``folder`` (view, grep, rename). The harnesses
(:data:`HARNESS_SPECS`) say which set each role gets. This package never imports
a model, an agent or the command line.

Names are imported on first use, so ``import memdir.tools`` is cheap and the
ranked sets' numerical dependencies (bm25s, numpy, scipy) load only when a
ranked set is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir._lazy import lazy_exports

if TYPE_CHECKING:
    from memdir.tools._harness import (
        DEFAULT_HARNESS,
        HARNESS_SPECS,
        HARNESSES,
        HarnessSpec,
        harness_prompt,
        harness_spec,
    )
    from memdir.tools._memory import MemoryCommands, folder_set, read_set, write_set
    from memdir.tools._ranked import bm25_set, chunk_set
    from memdir.tools._sandbox import SandboxUnavailableError
    from memdir.tools._sets import TOOLSET_NAMES, TOOLSETS, make_toolset
    from memdir.tools._shell import Quota, quota_usage, shell_set
    from memdir.tools._spec import (
        ToolError,
        ToolFunction,
        ToolResult,
        ToolSet,
        ToolSpec,
        tool_flags,
        tool_spec,
    )

_HOMES = {
    "DEFAULT_HARNESS": "_harness",
    "HARNESSES": "_harness",
    "HARNESS_SPECS": "_harness",
    "HarnessSpec": "_harness",
    "harness_prompt": "_harness",
    "harness_spec": "_harness",
    "TOOLSETS": "_sets",
    "TOOLSET_NAMES": "_sets",
    "MemoryCommands": "_memory",
    "Quota": "_shell",
    "SandboxUnavailableError": "_sandbox",
    "ToolError": "_spec",
    "ToolFunction": "_spec",
    "ToolResult": "_spec",
    "ToolSet": "_spec",
    "ToolSpec": "_spec",
    "bm25_set": "_ranked",
    "chunk_set": "_ranked",
    "folder_set": "_memory",
    "make_toolset": "_sets",
    "quota_usage": "_shell",
    "read_set": "_memory",
    "shell_set": "_shell",
    "tool_flags": "_spec",
    "tool_spec": "_spec",
    "write_set": "_memory",
}

__all__ = [
    "DEFAULT_HARNESS",
    "HARNESSES",
    "HARNESS_SPECS",
    "TOOLSETS",
    "TOOLSET_NAMES",
    "HarnessSpec",
    "MemoryCommands",
    "Quota",
    "SandboxUnavailableError",
    "ToolError",
    "ToolFunction",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "bm25_set",
    "chunk_set",
    "folder_set",
    "harness_prompt",
    "harness_spec",
    "make_toolset",
    "quota_usage",
    "read_set",
    "shell_set",
    "tool_flags",
    "tool_spec",
    "write_set",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
