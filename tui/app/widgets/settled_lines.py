"""What the settled blocks of a streamed answer share (:class:`~tui.app.widgets.settled_list.SettledList`,
:class:`~tui.app.widgets.settled_prose.SettledProse`): lines rendered once per width and kept as plain segment
tuples, strips built only for the lines on screen, selection and copy as in Textual's ``Log``, links opened
as ``Markdown`` opens them."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    from rich.segment import Segment
    from textual.geometry import Size
    from textual.selection import Selection

__all__ = ["STRIPS_KEPT", "SettledLines"]

STRIPS_KEPT = 300
"""Built strips kept for redrawing (a screenful or a few); the rest are rebuilt from segments when shown."""


class SettledLines(Widget):
    """A widget drawn from ``_lines``, which a subclass fills for a width in :meth:`_render_lines`."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"em", "strong", "s", "code_inline"}

    def __init__(self, *, classes: str) -> None:
        super().__init__(classes=classes)
        self._lines: list[tuple[Segment, ...]] = []
        """The segments of each line drawn so far, for the width in ``_rendered_at`` (plain tuples: a long
        block keeps few objects alive, and strips are built for the lines on screen only)."""
        self._texts: list[str] = []
        """The plain text of each line (what selection copies)."""
        self._strips: dict[int, Strip] = {}
        """Strips of lines drawn recently (the view), built from ``_lines``."""
        self._rendered_at = -1

    def _add_line(self, segments: tuple[Segment, ...]) -> None:
        self._lines.append(segments)
        self._texts.append("".join(segment.text for segment in segments))

    def _render_lines(self, width: int) -> None:
        """Start over at ``width`` (``_lines`` is empty): render everything the block holds."""
        raise NotImplementedError

    def _ensure_rendered(self, width: int) -> None:
        if width == self._rendered_at:
            return
        self._lines, self._texts = [], []
        self._strips.clear()
        self._render_lines(width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._ensure_rendered(width)
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._ensure_rendered(width)
        style = self.visual_style.rich_style
        if y >= len(self._lines):
            return Strip.blank(width, style)
        selection = self.text_selection
        strip = self._strips.get(y) if selection is None else None
        if strip is not None:
            return strip
        strip = Strip(self._lines[y]).apply_offsets(0, y)
        span = selection.get_span(y) if selection is not None else None
        if span is not None:
            low, high = span
            high = strip.cell_length if high == -1 else high
            selected = self.screen.get_component_rich_style("screen--selection")
            strip = Strip.join([strip.crop(0, low), strip.crop(low, high).apply_style(selected), strip.crop(high)])
        strip = strip.crop_extend(0, width, style)
        if selection is None:
            if len(self._strips) > STRIPS_KEPT:
                self._strips.clear()  # only what is on screen is worth keeping
            self._strips[y] = strip
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        self._ensure_rendered(self._rendered_at if self._rendered_at >= 0 else self.size.width)
        return selection.extract("\n".join(self._texts)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        self._rendered_at = -1  # colours are baked into the lines
        super().notify_style_update()

    async def action_link(self, href: str) -> None:
        """A link was clicked: open it, as ``Markdown`` does."""
        self.app.open_url(href)
