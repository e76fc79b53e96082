"""What an MCP server says outside its results — log and progress notifications — as deep-tui's own log lines.

The server's words are hostile: each message becomes one line, control characters made visible (an escape
sequence could set the terminal's title, clear the screen or write the clipboard), cut to :data:`LINE_LIMIT`.
Every message goes to deep-tui's log (``deep-tui.log``, and Textual's console under the app); the serious ones
(``warning`` and up) are logged as warnings, which ``deep-tui run`` prints on stderr — at most
:data:`LOUD_LIMIT` of them per server start, so a chatty server cannot flood the terminal (the rest stay in the
log). Nothing here reaches the app's screen.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

LINE_LIMIT = 500
"""The longest line one notification becomes (characters)."""
LOUD_LIMIT = 20
"""Warnings (and worse) from one server shown on ``run``'s stderr per start; later ones go to the log only."""
SERIOUS_LEVELS = frozenset({"warning", "error", "critical", "alert", "emergency"})


def one_line(data: object, limit: int = LINE_LIMIT) -> str:
    """``data`` (a string, or any JSON value) as one visible line of at most ``limit`` characters."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    text = " ".join(visible(text[: limit * 4]).split())  # bounded before the work: a message can be megabytes
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ServerLog:
    """The log and progress handlers of one server's client (fastmcp's shapes: awaited with each notification)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._loud = 0

    async def log(self, message: Any) -> None:
        """A ``notifications/message``: ``level``, ``data`` (any JSON) and an optional ``logger`` name."""
        level = str(getattr(message, "level", "info")).lower()
        origin = getattr(message, "logger", None)
        line = one_line(getattr(message, "data", ""))
        said = f"MCP server {self.server}{f' ({one_line(origin, 60)})' if origin else ''} says: {line}"
        if level not in SERIOUS_LEVELS:
            logger.info("%s", said)
        elif self._loud < LOUD_LIMIT:
            self._loud += 1
            logger.warning("%s%s", said, "" if self._loud < LOUD_LIMIT else
                           " (its further warnings go to the log only)")
        else:
            logger.info("%s [%s]", said, one_line(level, 20))

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A progress notification: logged when debugging, never shown."""
        logger.debug("MCP server %s: progress %s/%s %s", self.server, progress, total, one_line(message or ""))
