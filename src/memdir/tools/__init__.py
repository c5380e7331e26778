"""Tool sets over a memory store, served to models through function calling.

Sets (see SPEC section 2): ``write`` (the memory command set plus grep),
``read`` (view, grep, toc, section_read), ``bm25`` (read plus ranked whole-file
search), ``chunk`` (one top-3 chunk retriever), ``shell`` (one bash tool) and
``folder`` (view, grep, rename). This package never imports a model, an agent
or the command line.
"""

from memdir.tools._memory import MemoryCommands, folder_set, read_set, write_set
from memdir.tools._ranked import bm25_set, chunk_set
from memdir.tools._sandbox import SandboxUnavailableError
from memdir.tools._sets import TOOLSET_NAMES, make_toolset
from memdir.tools._shell import shell_set
from memdir.tools._spec import ToolError, ToolFunction, ToolResult, ToolSet, ToolSpec, tool_spec

__all__ = [
    "TOOLSET_NAMES",
    "MemoryCommands",
    "SandboxUnavailableError",
    "ToolError",
    "ToolFunction",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "bm25_set",
    "chunk_set",
    "folder_set",
    "make_toolset",
    "read_set",
    "shell_set",
    "tool_spec",
    "write_set",
]
