"""A running command's output in its tool block: the newest lines, appended as they arrive.

Each frame appends what arrived since the last one at O(new): the text goes to a
:class:`~tui.app.widgets.growing_text.GrowingText` (which wraps and repaints only the changed end), and only the
last :data:`TAIL_CHARS` characters are kept on screen — a command printing megabytes costs a count of its
newlines and a copy of its tail, never a re-render of everything. The whole output is the tool's result (saved
to disk by the chain when large: the block's "open saved output" shows it). Everything shown passes through
:func:`~tui.terminal_text.visible` (GrowingText does it): escape sequences from a command never reach the terminal.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.app.widgets.growing_text import GrowingText
from tui.wording import plural

__all__ = ["TAIL_CHARS", "CommandOutputView"]

TAIL_CHARS = 32_000
"""How much of the newest output is on screen; the view is cut back to this once it holds twice as much."""


class CommandOutputView(VerticalScroll):
    """The tail of a command's output, scrolled to its end while it runs, and a count of what came."""

    DEFAULT_CSS = """
    CommandOutputView { height: auto; max-height: 16; border-left: thick $panel; padding-left: 1; }
    CommandOutputView .command-output-count { color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__(classes="command-output")
        self.text_view = GrowingText(classes="command-output-text")
        self.count = Static("", classes="command-output-count")
        self.count.display = False
        self.chars = 0
        self.lines = 0
        self._shown = 0
        """Characters in ``text_view`` now."""

    def compose(self) -> ComposeResult:
        yield self.count
        yield self.text_view

    def on_mount(self) -> None:
        self.anchor()

    def feed(self, pieces: list[str]) -> None:
        """Append ``pieces`` (raw output, in order)."""
        arrived = sum(len(piece) for piece in pieces)
        if not arrived:
            return
        self.chars += arrived
        self.lines += sum(piece.count("\n") for piece in pieces)
        tail = _tail(pieces, TAIL_CHARS)
        if self._shown + len(tail) > 2 * TAIL_CHARS or len(tail) >= TAIL_CHARS:
            kept = self.text_view.text[-max(TAIL_CHARS - len(tail), 0):] if len(tail) < TAIL_CHARS else ""
            self.text_view.reset(kept)
            self._shown = len(kept)
        self.text_view.append(tail)
        self._shown += len(tail)
        if self.chars > self._shown:
            self.count.display = True
            self.count.update(Content(f"… {self.chars - self._shown:,} earlier characters not shown here "
                                      f"({plural(self.lines, 'line')} so far)"))


def _tail(pieces: list[str], limit: int) -> str:
    """The last ``limit`` characters of ``"".join(pieces)``, joining only what is needed."""
    taken: list[str] = []
    size = 0
    for piece in reversed(pieces):
        taken.append(piece)
        size += len(piece)
        if size >= limit:
            break
    text = "".join(reversed(taken))
    return text[-limit:] if len(text) > limit else text
