"""Plain text that only grows at its end, wrapped incrementally: the open block of a streamed answer.

Appending costs O(new text): the visual lines before the last one never change (greedy wrapping
only ever moves the last, unfinished line), so only that line is wrapped again and only the lines
that changed are repainted. A width change re-wraps everything once. Text is drawn as plain cells,
never parsed as markup; control characters are defused by :func:`tui.text.terminal_text.visible`.
Mouse selection and copy work as in Textual's ``Log``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len, get_character_cell_size
from rich.segment import Segment
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from rich.style import Style
    from textual.selection import Selection

__all__ = ["GrowingText", "wrap_line"]

TAB = "    "


def _fit(text: str, start: int, width: int, ascii: bool) -> int:
    """The index after the longest run of ``text[start:]`` that fits in ``width`` cells."""
    if ascii:
        return min(len(text), start + width)
    used = 0
    index = start
    while index < len(text):
        size = get_character_cell_size(text[index])
        if used + size > width:
            break
        used += size
        index += 1
    return index


def wrap_line(text: str, width: int, start: int = 0) -> list[tuple[int, int]]:
    """Greedy word wrap of one source line from ``start``: ``(start, end)`` of each visual line in ``text``.

    A line breaks after its last space that fits; a word longer than the width is cut. The space a
    line broke at belongs to no visual line, so joining the pieces with it gives ``text`` back.
    """
    if width <= 0:
        return [(start, len(text))]
    spans: list[tuple[int, int]] = []
    ascii = text.isascii()
    while True:
        end = _fit(text, start, width, ascii)
        if end >= len(text):
            spans.append((start, len(text)))
            return spans
        if text[end] == " ":
            spans.append((start, end))
            start = end + 1
            continue
        space = text.rfind(" ", start, end)
        if space > start:
            spans.append((start, space))
            start = space + 1
        else:
            spans.append((start, end))
            start = end


class GrowingText(Widget):
    """Append-only plain text; ``wrap=False`` keeps each source line on one visual line (code)."""

    DEFAULT_CSS = """
    GrowingText { height: auto; width: 1fr; }
    """

    def __init__(self, text: str = "", *, wrap: bool = True, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.wrap = wrap
        self._sources: list[str] = [""]
        """Source lines; the last one is still being written."""
        self._visual: list[tuple[int, int, int]] = []
        """(source line, start, end) of each visual line, for the width in ``_wrapped_at``."""
        self._wrapped_at = -1
        self._strips: dict[int, Strip] = {}
        self._style: Style | None = None
        """``rich_style`` (walks the ancestors for the background): computed once per style change."""
        if text:
            self.append(text)

    @property
    def text(self) -> str:
        """Everything appended, as shown (control characters made visible, tabs expanded)."""
        return "\n".join(self._sources)

    @property
    def line_count(self) -> int:
        """Visual lines at the current width."""
        return len(self._visual)

    def reset(self, text: str = "") -> None:
        """Show ``text`` instead of what was there."""
        self._sources = [""]
        self._visual = []
        self._wrapped_at = -1
        self._strips.clear()
        self._style = None
        self.append(text)
        self.refresh(layout=True)

    def append(self, text: str) -> None:
        """Add ``text`` at the end; repaints only the lines that changed."""
        if not text:
            return
        pieces = visible(text).replace("\t", TAB).split("\n")
        self._sources[-1] += pieces[0]
        self._sources.extend(pieces[1:])
        if self._wrapped_at < 0:
            return  # not laid out yet: wrapped on the first layout
        before = len(self._visual)
        first_changed = self._rewrap_tail(self._wrapped_at)
        if len(self._visual) != before:
            self.refresh(layout=True)
        else:
            self.refresh(Region(0, first_changed, self.size.width, len(self._visual) - first_changed))

    def _rewrap_tail(self, width: int) -> int:
        """Re-wrap from the last visual line (greedy wrapping never moves an earlier break); returns the
        first visual line that changed."""
        number, start, _ = self._visual[-1]
        first_changed = len(self._visual) - 1
        del self._visual[first_changed:]
        self._strips.pop(first_changed, None)
        self._visual.extend(self._wrap(number, width, start))
        for following in range(number + 1, len(self._sources)):
            self._visual.extend(self._wrap(following, width))
        return first_changed

    def _wrap(self, number: int, width: int, start: int = 0) -> list[tuple[int, int, int]]:
        line = self._sources[number]
        if not self.wrap or width <= 0:
            return [(number, start, len(line))]
        return [(number, begin, end) for begin, end in wrap_line(line, width, start)]

    def _ensure_wrapped(self, width: int) -> None:
        if width == self._wrapped_at:
            return
        self._wrapped_at = width
        self._visual = []
        self._strips.clear()
        for number in range(len(self._sources)):
            self._visual.extend(self._wrap(number, width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._ensure_wrapped(width)
        return len(self._visual)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._ensure_wrapped(width)
        style = self._style
        if style is None:
            style = self._style = self.rich_style
        if y >= len(self._visual):
            return Strip.blank(width, style)
        selection = self.text_selection
        strip = self._strips.get(y) if selection is None else None
        if strip is None:
            number, start, end = self._visual[y]
            text = self._sources[number][start:end]
            span = selection.get_span(y) if selection is not None else None
            if span is None:
                segments = [Segment(text, style)]
            else:
                low, high = span
                high = len(text) if high == -1 else high
                selected = style + self.screen.get_component_rich_style("screen--selection")
                segments = [Segment(text[:low], style), Segment(text[low:high], selected), Segment(text[high:], style)]
            strip = Strip(segments, cell_len(text)).crop_extend(0, width, style).apply_offsets(0, y)
            if selection is None:
                self._strips[y] = strip
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        lines = [self._sources[number][start:end] for number, start, end in self._visual]
        return selection.extract("\n".join(lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        self._strips.clear()
        self._style = None
        super().notify_style_update()
