"""Tool sets over a memory store, served to models through function calling.

Sets (see SPEC section 2): ``write`` (the memory command set plus grep),
``read`` (view, grep, toc, section_read), ``bm25`` (read plus ranked whole-file
search), ``chunk`` (one top-3 chunk retriever), ``shell`` (one bash tool) and
``folder`` (view, grep, rename). This package never imports a model, an agent
or the command line.
"""

from memdir.tools._sets import TOOLSET_NAMES, make_toolset
from memdir.tools._spec import ToolError, ToolFunction, ToolResult, ToolSet, ToolSpec, tool_spec

__all__ = [
    "TOOLSET_NAMES",
    "ToolError",
    "ToolFunction",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "make_toolset",
    "tool_spec",
]
