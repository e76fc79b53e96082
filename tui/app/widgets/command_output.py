"""A running command's output in its tool block: its newest lines, as they arrive.

Each frame costs O(what arrived since the last one) and a constant draw: the new text's newlines are counted, its
last :data:`TAIL_LINES` lines replace the oldest shown, and the view (one row per line, cut at the width) keeps
its height once full, so a command printing megabytes never re-lays out the chat. The whole output is the tool's
result, saved to disk by the chain when large (the block's "open saved output" shows it). Everything shown
passes through :func:`~tui.text.terminal_text.visible`: escape sequences from a command never reach the terminal.
"""

from __future__ import annotations

from collections import deque

from textual.content import Content
from textual.widgets import Static

from tui.text.terminal_text import visible
from tui.text.wording import plural

__all__ = ["LINE_CHARS", "TAIL_LINES", "CommandOutputView"]

TAIL_LINES = 12
"""Lines of the newest output on screen."""
LINE_CHARS = 400
"""A longer line is cut (the view shows one row per line anyway)."""


def _start_of_last_lines(piece: str, begin: int, count: int) -> int:
    """Where the last ``count`` lines of ``piece[begin:]`` start (``begin`` when it has no more): found from the
    end, so a piece of megabytes is neither split nor copied."""
    end = len(piece)
    for _ in range(count):
        found = piece.rfind("\n", begin, end)
        if found < 0:
            return begin
        end = found
    return end + 1


class CommandOutputView(Static):
    """The last :data:`TAIL_LINES` lines of a command's output, and how much came before them."""

    DEFAULT_CSS = """
    CommandOutputView { height: auto; border-left: thick $panel; padding-left: 1; text-wrap: nowrap;
                        text-overflow: ellipsis; }
    """

    def __init__(self) -> None:
        super().__init__("", classes="command-output")
        self.chars = 0
        self.lines = 0
        """Complete lines received (newlines)."""
        self._tail: deque[str] = deque([""], maxlen=TAIL_LINES + 1)
        """The newest lines; the last one is still being written."""
        self._rows = 0

    @property
    def shown_text(self) -> str:
        """What the view shows now (terminal-safe), without the count line."""
        return "\n".join(self._shown_lines())

    def feed(self, pieces: list[str]) -> None:
        """Append ``pieces`` (raw output, in order)."""
        for piece in pieces:
            if not piece:
                continue
            self.chars += len(piece)
            newlines = piece.count("\n")
            self.lines += newlines
            if not newlines:
                self._tail[-1] = (self._tail[-1] + piece[:LINE_CHARS])[:LINE_CHARS]
                continue
            first_end = piece.index("\n")
            self._tail[-1] = (self._tail[-1] + piece[:min(first_end, LINE_CHARS)])[:LINE_CHARS]
            start = _start_of_last_lines(piece, first_end + 1, TAIL_LINES + 1)  # a large piece: its newest lines
            self._tail.extend(line[:LINE_CHARS] for line in piece[start:].split("\n"))
        self._draw()

    def _shown_lines(self) -> list[str]:
        lines = list(self._tail)
        if lines and not lines[-1]:
            lines.pop()  # the output ended with a newline: no empty last row
        return [visible(line).replace("\n", " ") for line in lines[-TAIL_LINES:]]

    def _draw(self) -> None:
        shown = self._shown_lines()
        hidden = self.lines + (1 if self._tail[-1] else 0) - len(shown)
        rows = [*([f"… {plural(hidden, 'earlier line')} ({self.chars:,} characters in all)"] if hidden > 0 else []),
                *shown]
        pieces: list[tuple[str, str] | str] = []
        for number, row in enumerate(rows):
            if number:
                pieces.append("\n")
            pieces.append((row, "$text-muted") if hidden > 0 and number == 0 else row)
        self.update(Content.assemble(*pieces), layout=len(rows) != self._rows)
        self._rows = len(rows)
