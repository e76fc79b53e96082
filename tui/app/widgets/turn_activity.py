"""While a turn runs, one line says so: a spinner, the seconds so far, the tokens received, the tool at work.

``⠹ working 12 s · ≈340 tokens · grep · esc cancels`` — every anchor has such a line, so a long turn never
looks like a hung one; while an approval dialog is open it says the turn is waiting for the user's answer, and
while the turn waits for MCP servers still starting it names them (``starting MCP servers (github)… 4 s``).
Tokens are estimated from the characters received (answer, thinking, tool arguments; chars/4, as the chain
estimates) until the provider's own count arrives with the turn's end.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui.app.formatting import human_tokens
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.timer import Timer

    from tui.agent.turn_events import TurnEvent

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK_SECONDS = 0.25
clock: Callable[[], float] = time.monotonic
"""Where the seconds come from (snapshot tests hold it still, so the line they show is always the same)."""
CHARS_PER_TOKEN = 4


def elapsed(seconds: float) -> str:
    """``7 s``, ``1 min 05 s``: to the second, as a wait is felt."""
    whole = int(max(0.0, seconds))
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


class TurnActivity(Static):
    """Shown from the start of a turn to its end; counts on its own between events."""

    DEFAULT_CSS = """
    TurnActivity { width: 100%; height: 1; padding: 0 1; color: $text-muted; display: none;
                   text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self._started: float | None = None
        self._chars = 0
        self._thinking = False
        self._tools: dict[str, str] = {}
        self._waiting_for = ""
        """What the turn waits for before its first request (MCP servers starting), or nothing."""
        self._ticker: Timer | None = None

    def on_mount(self) -> None:
        # a dialog opening or closing changes what the turn waits on: say so now, not at the next tick
        self.app.screen_change_signal.subscribe(self, lambda _screen: self._tick(), immediate=True)

    @property
    def text(self) -> str:
        """What the line says now ("" when hidden)."""
        return str(self.render()) if self.display else ""

    @property
    def estimated_tokens(self) -> int:
        return self._chars // CHARS_PER_TOKEN

    def start(self, doing: str = "") -> None:
        """A turn began; ``doing`` says what it does instead of "working" (``compacting…``)."""
        self._started, self._chars, self._thinking, self._tools, self._waiting_for = clock(), 0, False, {}, doing
        if self._ticker is None:
            self._ticker = self.set_interval(TICK_SECONDS, self._tick)
        self.display = True
        self._tick()

    def count(self, event: TurnEvent) -> None:
        """Take in what the turn streamed (O(1); drawn at the next tick, at once when the servers it waited for are
        up)."""
        # imported here, not for the first frame (the module is loaded by then: a dictionary look-up)
        from tui.agent.turn_events import (
            McpServersStarting,
            TextDelta,
            ThinkingDelta,
            ToolCallFinished,
            ToolCallStarted,
        )

        if isinstance(event, McpServersStarting):
            self._waiting_for = event.describe()
            self._tick()
            return
        servers_up = bool(self._waiting_for)  # anything else streamed: the servers are up (or given up on)
        self._waiting_for = ""
        if isinstance(event, TextDelta):
            self._chars += len(event.text)
            self._thinking = False
        elif isinstance(event, ThinkingDelta):
            self._chars += len(event.text)
            self._thinking = True
        elif isinstance(event, ToolCallStarted):
            self._chars += len(event.args_json)
            self._thinking = False
            self._tools[event.call_id] = event.tool_name
        elif isinstance(event, ToolCallFinished):
            self._tools.pop(event.call_id, None)
        if servers_up:
            self._tick()  # not "starting MCP servers" for up to a tick more

    def stop(self) -> None:
        """The turn ended (finished, failed or cancelled)."""
        self._started = None
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self.display = False

    def _tick(self) -> None:
        if self._started is None:
            return
        from tui.app.screens.approval_dialog import (
            ApprovalDialog,  # loaded with the first turn, not for the first frame
        )

        now = clock()
        spinner = SPINNER[int(now / TICK_SECONDS) % len(SPINNER)]
        if isinstance(self.app.screen, ApprovalDialog):  # the turn waits on the user, not on the model
            doing = "waiting for your answer"
        elif self._waiting_for:
            doing = self._waiting_for
        else:
            doing = "thinking" if self._thinking else "working"
        pieces: list[tuple[str, str] | str] = [
            (f"{spinner} ", "$accent"), f"{doing} {elapsed(now - self._started)}"]
        if self._chars:
            pieces.append(f" · ≈{human_tokens(self.estimated_tokens)} tokens")
        if self._tools:
            pieces.append((f" · {visible(', '.join(dict.fromkeys(self._tools.values())))}", "$warning"))
        pieces.append(" · esc cancels")
        self.update(Content.assemble(*pieces), layout=False)  # one row, full width: its size never changes
