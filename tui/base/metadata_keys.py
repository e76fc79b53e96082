"""The keys deep-tui writes into pydantic-ai parts' ``metadata`` (so into messages.json).

One definition each: the chain writes them, the store, the search index and the app read
them back, so a key typed twice could silently drift and lose a summary or a saved output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EVICTED_PATH_KEY = "deep_tui_evicted_path"
"""On a tool return: where its full output was saved (eviction or tool-call compaction)."""

SAVED_CHARS_KEY = "deep_tui_saved_chars"
"""On an evicted tool return: how many characters the saved output holds (the return is only its preview)."""

EVICTION_ERROR_KEY = "deep_tui_eviction_error"
"""On a tool return: why its output could not be saved."""

SAVED_LINES_KEY = "deep_tui_saved_lines"
"""On a compacted tool return: ``[offset, lines]`` of the saved copy."""

MASKED_KEY = "deep_tui_masked"
"""On a tool return already replaced by a preview (tier 2)."""

ELIDED_ARG = "deep_tui_elided"
"""In a write/edit tool call's arguments: the content was replaced by a pointer to the file."""

SUMMARY_METADATA_KEY = "deep_tui_summary"
"""On a summary's ``CompactionPart``: strategy, replaced count, the first kept message, focus."""

SEAL_METADATA_KEY = "deep_tui_sealed"
"""On a part closing what a stopped or failed run left open."""

USER_COMMAND_KEY = "deep_tui_user_command"
"""On the request recording a ``!command`` the user ran: ``{"command", "status", "saved_path"}``."""

REWIND_KEY = "deep_tui_rewind"
"""On the request recording a rewind of the files: ``{"message", "session", "files"}`` (what was restored)."""

DAMAGED_METADATA_KEY = "deep_tui_damaged"
"""On the placeholder for messages a damaged messages.json lost."""

WRITES_FILES_KEY = "deep_tui_writes_files"
"""In a tool definition's metadata (not in messages.json): the tool changes files, so it asks first."""

MCP_SERVER_KEY = "deep_tui_mcp_server"
"""In a tool definition's metadata (not in messages.json): the MCP server the tool belongs to (it asks first)."""
RUNS_COMMANDS_KEY = "deep_tui_runs_commands"
"""In a tool definition's metadata (not in messages.json): the tool runs shell commands, so it asks first."""
DELEGATES_KEY = "deep_tui_delegates"
"""Tool metadata: the tool runs a subagent, whose own tool calls each have the time limit (the call itself has none)."""

WRITES_MEMORY_KEY = "deep_tui_writes_memory"
"""In a tool definition's metadata (not in messages.json): the tool changes MEMORY.md (the Memory panel follows)."""

def saved_chars(metadata: Mapping[str, object]) -> int | None:
    """The saved output's size in characters, from a tool return's metadata (``None``: not recorded, or not a
    count — metadata comes from messages.json, which may have been edited)."""
    value = metadata.get(SAVED_CHARS_KEY)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _field(item: object, name: str) -> object:
    """``item[name]`` of a JSON record, else the attribute ``name`` of a pydantic-ai object."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def summary_info(message: object) -> dict[str, Any] | None:
    """The :data:`SUMMARY_METADATA_KEY` metadata of a deep-tui summary message, else ``None`` — the one reading
    of it. ``message`` is a pydantic-ai ``ModelRequest`` (the chain, the store) or its record as messages.json
    holds it (a dict: a resumed session's tail is drawn before pydantic-ai is imported)."""
    parts = _field(message, "parts")
    if _field(message, "kind") != "request" or not isinstance(parts, (list, tuple)):
        return None
    for part in parts:
        metadata = _field(part, "metadata")
        if _field(part, "part_kind") == "compaction" and isinstance(metadata, Mapping):
            info = metadata.get(SUMMARY_METADATA_KEY)
            if isinstance(info, dict):
                return info
    return None
