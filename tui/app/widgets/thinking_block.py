"""The model's thinking: a collapsed, dimmed block above the answer it led to.

Streamed thinking only grows a character count in the title while collapsed; the text is drawn when
the user expands the block (and kept current while it is open), so a long chain of thought costs a
frame nothing. Model text: shown as plain content, never markup.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Static

from tui.app.widgets.chat_blocks import CUT_SHORT_MARK
from tui.text.terminal_text import visible


class ThinkingBlock(Collapsible):
    """What the model thought before answering (pydantic-ai ``ThinkingPart``)."""

    DEFAULT_CSS = """
    ThinkingBlock { color: $text-muted; text-style: italic; height: auto; }
    ThinkingBlock CollapsibleTitle { color: $text-muted; }
    """

    def __init__(self, text: str = "", *, cut_short: bool = False) -> None:
        """``cut_short``: recorded thinking the model did not finish (the title says so)."""
        self.text = text
        self.cut_short = cut_short
        self._body = Static(Content(""), classes="thinking-text")
        super().__init__(self._body, collapsed=True, classes="thinking-block")
        self._drawn = -1
        self._retitle()

    def add(self, delta: str) -> None:
        """Append streamed thinking (already terminal-safe): the title counts it; the text shows when open."""
        self.text += delta
        self._retitle()
        if not self.collapsed:
            self._draw()

    def _retitle(self) -> None:
        mark = f" · {CUT_SHORT_MARK}" if self.cut_short else ""
        self.title = Content(f"thinking · {len(self.text):,} chars{mark}")  # type: ignore[assignment]

    def _draw(self) -> None:
        if self._drawn != len(self.text):
            self._body.update(Content(visible(self.text)))
            self._drawn = len(self.text)

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is self:
            self._draw()
