"""The session's modes, by name: a leaf, so `deep-tui --help` and `search` need not load the config."""

from __future__ import annotations

MODE_NAMES: tuple[str, ...] = ("default", "accept-writes", "plan")
"""In the order Shift+Tab cycles them (see :mod:`tui.agent.tasks.modes`): default asks before each change,
accept-writes lets file writes through, plan refuses every change."""
