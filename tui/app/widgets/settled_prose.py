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

from typing import TYPE_CHECKING, ClassVar

from rich.segment import Segment
from textual.content import Content
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from tui.app.widgets.settled_list import inline_content

if TYPE_CHECKING:
    from markdown_it.token import Token

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


class SettledProse(Widget):
    """Consecutive paragraphs of a streamed answer: added as they settle, each rendered once."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"em", "strong", "s", "code_inline"}

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
        self._lines: list[tuple[Segment, ...]] = []
        self._texts: list[str] = []
        self._rendered = 0
        self._rendered_at = -1
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

    def _ensure_rendered(self, width: int) -> None:
        if width != self._rendered_at:
            self._lines, self._texts, self._rendered = [], [], 0
            self._render_new(width)

    def _render_new(self, width: int) -> None:
        self._rendered_at = width
        for paragraph in self.paragraphs[self._rendered:]:
            if self._lines:
                self._lines.append(())  # the paragraph's bottom margin, as between Markdown paragraphs
                self._texts.append("")
            for strip in Visual.to_strips(self, paragraph, width, None, self.visual_style, apply_selection=False):
                segments = tuple(strip if strip.cell_length <= width else strip.crop(0, width))
                self._lines.append(segments)
                self._texts.append("".join(segment.text for segment in segments))
        self._rendered = len(self.paragraphs)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._ensure_rendered(width)
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._ensure_rendered(width)
        style = self.visual_style.rich_style
        if y >= len(self._lines):
            return Strip.blank(width, style)
        strip = Strip(self._lines[y]).apply_offsets(0, y)
        selection = self.text_selection
        span = selection.get_span(y) if selection is not None else None
        if span is not None:
            low, high = span
            high = strip.cell_length if high == -1 else high
            selected = self.screen.get_component_rich_style("screen--selection")
            strip = Strip.join([strip.crop(0, low), strip.crop(low, high).apply_style(selected), strip.crop(high)])
        return strip.crop_extend(0, width, style)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        self._ensure_rendered(self._rendered_at if self._rendered_at >= 0 else self.size.width)
        return selection.extract("\n".join(self._texts)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def notify_style_update(self) -> None:
        self._rendered_at = -1  # colours are baked into the lines
        super().notify_style_update()

    async def action_link(self, href: str) -> None:
        """A link in a paragraph was clicked: open it, as ``Markdown`` does."""
        self.app.open_url(href)
