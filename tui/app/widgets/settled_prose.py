"""A streamed answer's run of plain paragraphs drawn as ONE widget that grows paragraph by paragraph.

Textual's ``Markdown`` mounts one widget per paragraph (styled, composed and laid out each), so a long prose
answer mounts hundreds while it streams, and in a real terminal that work was most of what deep-tui did per
streamed chunk beyond what a bare agent does. A :class:`SettledProse` holds consecutive top-level paragraphs
as inline :class:`~textual.content.Content` (built from markdown-it tokens as ``Markdown`` builds them, see
:func:`~tui.app.widgets.settled_list.inline_content`) and renders each once, looking as ``Markdown`` draws
them: wrapped to the width, one blank line after each. Anything else (headings, fences, quotes, tables,
lists) is left to ``Markdown`` or :class:`~tui.app.widgets.settled_list.SettledList`. Model text is never
parsed as markup; selection and copy work as in Textual's ``Log``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.visual import Visual

from tui.app.widgets.settled_lines import SettledLines
from tui.app.widgets.settled_list import inline_content

if TYPE_CHECKING:
    from markdown_it.token import Token
    from textual.content import Content

__all__ = ["SettledProse", "plain_paragraphs"]


def plain_paragraphs(tokens: list[Token]) -> list[Content] | None:
    """The paragraphs ``tokens`` consist of (top-level paragraphs only), or ``None`` when they hold
    anything else."""
    paragraphs: list[Content] = []
    for token in tokens:
        if token.type in ("paragraph_open", "paragraph_close") and token.level == 0:
            continue
        if token.type == "inline" and token.level == 1:
            paragraphs.append(inline_content(token))
            continue
        return None
    return paragraphs or None


class SettledProse(SettledLines):
    """Consecutive paragraphs of a streamed answer: added as they settle, each rendered once."""

    DEFAULT_CSS = """
    SettledProse {
        height: auto; width: 1fr; margin: 0 0 1 0; color: $foreground;
        &:dark > .code_inline { background: $warning 10%; color: $text-warning 95%; }
        &:light > .code_inline { background: $error 5%; color: $text-error 95%; }
        &:ansi > .code_inline { background: ansi_default !important; }
        & > .em { text-style: italic; }
        & > .strong { text-style: bold; }
        & > .s { text-style: strike; }
    }
    """

    def __init__(self, paragraphs: list[Content]) -> None:
        super().__init__(classes="settled-prose")
        self.paragraphs: list[Content] = []
        self._rendered = 0
        self.extend(paragraphs)

    @property
    def text(self) -> str:
        """The paragraphs as plain text, a blank line between them."""
        return "\n\n".join(paragraph.plain for paragraph in self.paragraphs)

    def extend(self, paragraphs: list[Content]) -> None:
        """Add further paragraphs; draws only them."""
        self.paragraphs.extend(paragraphs)
        if self._rendered_at >= 0:
            self._render_new(self._rendered_at)
        self.refresh(layout=True)

    def list_continues(self) -> None:
        """Paragraphs end no list; kept for the settled blocks' common interface."""

    def _render_lines(self, width: int) -> None:
        self._rendered = 0
        self._render_new(width)

    def _render_new(self, width: int) -> None:
        self._rendered_at = width
        for paragraph in self.paragraphs[self._rendered:]:
            if self._lines:
                self._add_line(())  # the paragraph's bottom margin, as between Markdown paragraphs
            for strip in Visual.to_strips(self, paragraph, width, None, self.visual_style, apply_selection=False):
                self._add_line(tuple(strip if strip.cell_length <= width else strip.crop(0, width)))
        self._rendered = len(self.paragraphs)
