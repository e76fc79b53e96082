"""What a tool does, said once on the tool itself (its pydantic-ai metadata), read by whoever must know.

A tool that changes files, runs commands or changes MEMORY.md carries a mark; the approval gate asks before
the first two run, and nothing keeps a list of their names by hand: :class:`ToolKinds` derives the name sets
from the marks, and the session hands them to those that need names (the chain, which must not import the
agent; the turn, which tells the Memory panel).

To add a tool: give it the mark of what it does (``metadata=WRITES_FILES_METADATA`` on ``@tool``); the gate,
the chain's tier 2 and the turn's events follow.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic_ai.tools import ToolDefinition

from tui.base.metadata_keys import DELEGATES_KEY, MCP_SERVER_KEY, RUNS_COMMANDS_KEY, WRITES_FILES_KEY, WRITES_MEMORY_KEY

__all__ = ["DELEGATES_METADATA", "RUNS_COMMANDS_METADATA", "WRITES_FILES_METADATA", "WRITES_MEMORY_METADATA", "ToolKinds",
           "changes_something", "delegates", "mcp_read_only", "runs_commands", "writes_files", "writes_memory"]

WRITES_FILES_METADATA = {WRITES_FILES_KEY: True}
"""Tool metadata marking a tool that changes files in the working directory (it needs approval)."""

RUNS_COMMANDS_METADATA = {RUNS_COMMANDS_KEY: True}
"""Tool metadata marking a tool that runs shell commands (it needs approval)."""

DELEGATES_METADATA = {DELEGATES_KEY: True}
"""Tool metadata marking a tool that runs a subagent (``task``): no time limit of its own, its subagent's tool calls
have theirs."""

WRITES_MEMORY_METADATA = {WRITES_MEMORY_KEY: True}
"""Tool metadata marking a tool that changes MEMORY.md (the Memory panel is refilled after it)."""


def writes_files(tool_def: ToolDefinition) -> bool:
    """Whether a tool changes files in the working directory (and so needs approval)."""
    return bool((tool_def.metadata or {}).get(WRITES_FILES_KEY))


def runs_commands(tool_def: ToolDefinition | None) -> bool:
    """Whether a tool runs shell commands (and so needs approval)."""
    return tool_def is not None and bool((tool_def.metadata or {}).get(RUNS_COMMANDS_KEY))


def delegates(tool_def: ToolDefinition | None) -> bool:
    """Whether a tool runs a subagent (its own calls are time-limited, not the tool's)."""
    return tool_def is not None and bool((tool_def.metadata or {}).get(DELEGATES_KEY))


def writes_memory(tool_def: ToolDefinition) -> bool:
    """Whether a tool changes MEMORY.md."""
    return bool((tool_def.metadata or {}).get(WRITES_MEMORY_KEY))


@dataclass(frozen=True)
class ToolKinds:
    """The names of the tools of each kind, derived from their marks (the one source of these sets)."""

    file_writing: frozenset[str] = frozenset()
    command_running: frozenset[str] = frozenset()
    memory_writing: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tool_defs: Iterable[ToolDefinition]) -> ToolKinds:
        """The sets for these tool definitions."""
        defs = list(tool_defs)
        return cls(file_writing=frozenset(d.name for d in defs if writes_files(d)),
                   command_running=frozenset(d.name for d in defs if runs_commands(d)),
                   memory_writing=frozenset(d.name for d in defs if writes_memory(d)))


def mcp_read_only(tool_def: ToolDefinition) -> bool:
    """Whether an MCP server marked its tool read-only (its ``readOnlyHint`` annotation, as pydantic-ai keeps it
    in the tool's metadata); a tool without the mark may change something."""
    annotations = (tool_def.metadata or {}).get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def changes_something(tool_def: ToolDefinition) -> bool:
    """Whether a tool may change something outside the session's own task state: it writes files, runs
    commands, changes MEMORY.md, or is an MCP server's tool the server did not mark read-only (plan mode
    refuses these)."""
    if writes_files(tool_def) or runs_commands(tool_def) or writes_memory(tool_def):
        return True
    return (tool_def.metadata or {}).get(MCP_SERVER_KEY) is not None and not mcp_read_only(tool_def)
