"""The names of the app's worker groups that more than one module looks for."""

from __future__ import annotations

__all__ = ["TURN_GROUP"]

TURN_GROUP = "turn"
"""The chat's turns run in this group, one at a time (:mod:`tui.app.chat.turn_runner`); a stop signal cancels
it (:mod:`tui.app.stop_signals`)."""
