"""The session's mode: *default* (changes ask first), *auto-accept writes*, *plan* (nothing changes).

Shift+Tab in the app cycles them in this order; ``--mode`` and ``[tools] mode`` (the user's config) choose
the first one. The names are defined once, in :mod:`tui.base.config` (which validates the config key).
"""

from __future__ import annotations

from typing import Literal, cast

from tui.base.config import MODE_NAMES

SessionMode = Literal["default", "accept-writes", "plan"]

MODE_LABELS: dict[str, str] = {
    "default": "default",
    "accept-writes": "auto-accept writes",
    "plan": "plan",
}
"""How each mode is named on screen (title bar, gauge line, ``run``'s notes)."""

MODE_HINTS: dict[str, str] = {
    "default": "file writes, shell commands and MCP tools ask first",
    "accept-writes": "file writes and edits run without asking; shell commands and MCP tools still ask",
    "plan": "nothing is changed: writes, edits, commands and MCP tools that change something are refused; "
            "the agent reads, searches and writes a plan",
}


def as_mode(name: str) -> SessionMode:
    """``name`` as a mode; ``ValueError`` for an unknown one."""
    if name not in MODE_NAMES:
        raise ValueError(f"unknown mode {name!r} (one of {', '.join(MODE_NAMES)})")
    return cast(SessionMode, name)


def next_mode(mode: str) -> SessionMode:
    """The mode Shift+Tab goes to from ``mode``: default → auto-accept writes → plan → default."""
    position = MODE_NAMES.index(mode) if mode in MODE_NAMES else -1
    return as_mode(MODE_NAMES[(position + 1) % len(MODE_NAMES)])


PLAN_MODE_INSTRUCTIONS = """\
## Plan mode (set by the user)
You are in plan mode: do not change anything. Tools that write or edit files, run shell commands or call MCP
tools that change something are refused until the user leaves plan mode. Read, list, grep and search what you
need, keep your plan in write_todos, and end your turn with the plan in words: the steps, the files each one
touches, and how you will check the result. The user will then tell you to go ahead, or ask for changes."""
