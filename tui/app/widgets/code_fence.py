"""A code block in an answer that says when its lines are cut at the chat's edge, and shows it whole on a click.

Textual's :class:`~textual.widgets.markdown.MarkdownFence` never wraps code: it scrolls sideways with its
scrollbar hidden, so a line longer than the chat is wide simply ends at the edge. :class:`AnswerFence` adds a
line under such a block — ``→ 3 lines cut at the edge (up to 42 more columns) · click to see the whole block`` —
computed again whenever the width changes (nothing while every line fits), and a click on it (or Enter on it)
opens the block in a viewer that wraps its lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Label, Static
from textual.widgets.markdown import MarkdownFence

from tui.text.wording import plural

if TYPE_CHECKING:
    from textual import events
    from textual.app import ComposeResult

__all__ = ["AnswerFence", "FenceCutMark", "cut_lines"]

CODE_PADDING = 4
"""Columns the fence's code label leaves free (``padding: 1 2``: two on each side) until it is styled."""


def cut_lines(code: str, width: int) -> tuple[int, int]:
    """``(lines longer than width, columns the longest one runs past it)``; ``(0, 0)`` when everything fits."""
    lengths = [cell_len(line.expandtabs(8)) for line in code.splitlines()]
    over = [length - width for length in lengths if length > width]
    return len(over), max(over, default=0)


def cut_words(lines: int, columns: int) -> str:
    """The mark's text: how much is cut, and how to see it."""
    return (f"→ {plural(lines, 'line')} cut at the edge (up to {plural(columns, 'more column')}) · "
            "click here or Enter to see the whole block")


class FenceCutMark(Static, can_focus=True):
    """The line under a code block whose lines are cut; a click or Enter opens the whole block."""

    DEFAULT_CSS = """
    FenceCutMark { color: $text-warning; text-style: italic; padding: 0 2; display: none; }
    FenceCutMark.-cut { display: block; }
    FenceCutMark:hover, FenceCutMark:focus { text-style: italic underline; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "open", "see the whole block", show=False)]

    def __init__(self, code: str, language: str) -> None:
        super().__init__("", classes="fence-cut")
        self.code = code
        self.language = language

    def show_cut(self, lines: int, columns: int) -> None:
        """Say how much is cut (``lines`` 0: nothing, the mark is hidden)."""
        self.set_class(lines > 0, "-cut")
        self.update(Content(cut_words(lines, columns)) if lines else "")

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        from tui.app.screens.basic_dialogs import TextViewerModal

        title = f"Code block ({self.language})" if self.language else "Code block"
        self.app.push_screen(TextViewerModal(title, Content(self.code)))


class AnswerFence(MarkdownFence):
    """:class:`MarkdownFence` with a :class:`FenceCutMark` under the code when lines run past the edge."""

    def compose(self) -> ComposeResult:
        yield Label(self._highlighted_code, id="code-content", expand=True)
        yield FenceCutMark(self.code, self.lexer)

    def on_resize(self, event: events.Resize) -> None:
        self._measure(event.size.width)

    def on_mount(self) -> None:
        self._measure(self.size.width)

    def _measure(self, width: int) -> None:
        if width <= 0:
            return
        padding = CODE_PADDING
        for label in self.query("#code-content"):
            padding = label.styles.padding.left + label.styles.padding.right  # 4, or 0 in ANSI mode
        lines, columns = cut_lines(self.code.rstrip("\n"), max(width - padding, 1))
        for mark in self.query(FenceCutMark):
            mark.show_cut(lines, columns)
