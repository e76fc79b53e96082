"""What a tool does, said once on the tool itself (its pydantic-ai metadata), read by whoever must know.

A tool that changes files or runs commands carries a mark; the approval gate asks before such a tool
runs, and nothing else keeps a list of their names.
"""

from __future__ import annotations

from pydantic_ai.tools import ToolDefinition

from tui.base.metadata_keys import CHANGES_MEMORY_KEY, MCP_SERVER_KEY, RUNS_COMMANDS_KEY, WRITES_FILES_KEY

__all__ = ["CHANGES_MEMORY_METADATA", "RUNS_COMMANDS_METADATA", "WRITES_FILES_METADATA", "changes_memory",
           "changes_something", "runs_commands", "writes_files"]

WRITES_FILES_METADATA = {WRITES_FILES_KEY: True}
"""Tool metadata marking a tool that changes files in the working directory (it needs approval)."""

RUNS_COMMANDS_METADATA = {RUNS_COMMANDS_KEY: True}
"""Tool metadata marking a tool that runs shell commands (it needs approval)."""

CHANGES_MEMORY_METADATA = {CHANGES_MEMORY_KEY: True}
"""Tool metadata marking a tool that changes MEMORY.md (no approval, but refused in plan mode)."""


def writes_files(tool_def: ToolDefinition) -> bool:
    """Whether a tool changes files in the working directory (and so needs approval)."""
    return bool((tool_def.metadata or {}).get(WRITES_FILES_KEY))


def runs_commands(tool_def: ToolDefinition | None) -> bool:
    """Whether a tool runs shell commands (and so needs approval)."""
    return tool_def is not None and bool((tool_def.metadata or {}).get(RUNS_COMMANDS_KEY))


def changes_memory(tool_def: ToolDefinition) -> bool:
    """Whether a tool changes the agent's MEMORY.md."""
    return bool((tool_def.metadata or {}).get(CHANGES_MEMORY_KEY))


def mcp_read_only(tool_def: ToolDefinition) -> bool:
    """Whether an MCP server marked its tool read-only (its ``readOnlyHint`` annotation, as pydantic-ai keeps it
    in the tool's metadata); a tool without the mark may change something."""
    annotations = (tool_def.metadata or {}).get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def changes_something(tool_def: ToolDefinition) -> bool:
    """Whether a tool may change something outside the session's own task state: it writes files, runs
    commands, changes MEMORY.md, or is an MCP server's tool the server did not mark read-only (plan mode
    refuses these)."""
    if writes_files(tool_def) or runs_commands(tool_def) or changes_memory(tool_def):
        return True
    return (tool_def.metadata or {}).get(MCP_SERVER_KEY) is not None and not mcp_read_only(tool_def)
