"""What a tool does, said once on the tool itself (its pydantic-ai metadata), read by whoever must know.

A tool that changes files or runs commands carries a mark; the approval gate asks before such a tool
runs, and nothing else keeps a list of their names.
"""

from __future__ import annotations

from pydantic_ai.tools import ToolDefinition

from tui.base.metadata_keys import DELEGATES_KEY, RUNS_COMMANDS_KEY, WRITES_FILES_KEY

__all__ = ["DELEGATES_METADATA", "RUNS_COMMANDS_METADATA", "WRITES_FILES_METADATA", "delegates", "runs_commands",
           "writes_files"]

WRITES_FILES_METADATA = {WRITES_FILES_KEY: True}
"""Tool metadata marking a tool that changes files in the working directory (it needs approval)."""

RUNS_COMMANDS_METADATA = {RUNS_COMMANDS_KEY: True}
"""Tool metadata marking a tool that runs shell commands (it needs approval)."""

DELEGATES_METADATA = {DELEGATES_KEY: True}
"""Tool metadata marking a tool that runs a subagent (``task``): no time limit of its own, its subagent's tool calls
have theirs."""


def writes_files(tool_def: ToolDefinition) -> bool:
    """Whether a tool changes files in the working directory (and so needs approval)."""
    return bool((tool_def.metadata or {}).get(WRITES_FILES_KEY))


def runs_commands(tool_def: ToolDefinition | None) -> bool:
    """Whether a tool runs shell commands (and so needs approval)."""
    return tool_def is not None and bool((tool_def.metadata or {}).get(RUNS_COMMANDS_KEY))


def delegates(tool_def: ToolDefinition | None) -> bool:
    """Whether a tool runs a subagent (its own calls are time-limited, not the tool's)."""
    return tool_def is not None and bool((tool_def.metadata or {}).get(DELEGATES_KEY))
