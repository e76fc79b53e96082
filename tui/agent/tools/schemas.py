"""Tool schemas built once per process, not once per session.

pydantic-ai builds a tool's argument validator and JSON schema from its signature and docstring
(``function_schema``): ~15 ms for deep-tui's tools, paid again by every runtime because the tools are
closures over the session's path policy, memory file and index. A closure's signature and docstring
are its function's, so the schema is built for the first closure of each tool and reused, bound to
the next closure, for every runtime after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from pydantic_ai import FunctionToolset, Tool
from pydantic_ai._function_schema import FunctionSchema

__all__ = ["tool", "tool_plain"]

ToolFunction = TypeVar("ToolFunction", bound=Callable[..., Any])

_SCHEMAS: dict[tuple[str, str], FunctionSchema] = {}


def _register(toolset: FunctionToolset[None], function: Callable[..., Any], *, takes_ctx: bool,
              metadata: dict[str, Any] | None) -> None:
    key = (function.__module__, function.__qualname__)
    schema = _SCHEMAS.get(key)
    if schema is None:
        _SCHEMAS[key] = toolset.add_function(function, takes_ctx=takes_ctx, metadata=metadata).function_schema
        return
    toolset.add_tool(Tool(function, takes_ctx=takes_ctx, metadata=metadata,
                          function_schema=replace(schema, function=function)))


def tool(toolset: FunctionToolset[None], *, metadata: dict[str, Any] | None = None,
         ) -> Callable[[ToolFunction], ToolFunction]:
    """``@toolset.tool`` (the function takes ``RunContext``) with the schema built once per process."""
    def register(function: ToolFunction) -> ToolFunction:
        _register(toolset, function, takes_ctx=True, metadata=metadata)
        return function
    return register


def tool_plain(toolset: FunctionToolset[None], *, metadata: dict[str, Any] | None = None,
               ) -> Callable[[ToolFunction], ToolFunction]:
    """``@toolset.tool_plain`` with the schema built once per process."""
    def register(function: ToolFunction) -> ToolFunction:
        _register(toolset, function, takes_ctx=False, metadata=metadata)
        return function
    return register
