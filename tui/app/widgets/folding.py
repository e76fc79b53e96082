"""Blocks above the view taken out of layout, with a blank of the same height in their place.

Textual lays out every displayed widget of the screen on each layout refresh, so a long answer (a
list settles item by item) or a chat with hundreds of answers would make every frame of a stream
cost O(chat). :class:`FoldedSpace` keeps that bounded: blocks that ended a few lines above the view are
hidden (``display: none`` — no layout, no paint) and one blank widget of their height stands in for
them, so nothing on screen moves. When the blank itself is painted (the reader scrolled up to it),
the blocks are displayed again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.errors import NoWidget
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["FoldedSpace", "far_above"]


MARGIN_LINES = 4
"""How far above the view a block must end before it is folded (a little scrolling never unfolds)."""


def far_above(widget: Widget, view: Widget) -> bool:
    """``widget`` ends more than :data:`MARGIN_LINES` above what ``view`` shows."""
    try:
        bottom = widget.region.bottom
    except NoWidget:
        return False
    return bottom < view.region.y - MARGIN_LINES


class FoldedSpace(Widget):
    """Stands in, at the same height, for the blocks it folded; unfolds them when it is shown."""

    DEFAULT_CSS = """
    FoldedSpace { height: 0; width: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.folded: list[Widget] = []

    def fold(self, blocks: Sequence[Widget], following: Widget) -> None:
        """Hide ``blocks`` (consecutive, right after this space or after what it already holds) and grow
        to keep ``following`` — the first block left displayed — where it is."""
        if not blocks:
            return
        top = self.virtual_region.y
        height = following.virtual_region.y - following.styles.margin.top - top
        for block in blocks:
            block.display = False
        self.folded.extend(blocks)
        self.styles.height = max(0, height)

    def unfold(self) -> None:
        """Display the folded blocks again."""
        if not self.folded:
            return
        for block in self.folded:
            block.display = True
        self.folded.clear()
        self.styles.height = 0

    def render_line(self, y: int) -> Strip:
        if self.folded:  # painted, so on screen: the reader wants what is here
            self.call_later(self.unfold)
        return Strip.blank(self.size.width, self.rich_style)
