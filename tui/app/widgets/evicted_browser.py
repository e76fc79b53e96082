"""The evicted-outputs browser: the session's saved tool outputs, newest first.

Enter (or a click) opens :class:`~tui.app.screens.evicted_viewer.EvictedViewerScreen`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import on
from textual.content import Content
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.app.formatting import human_size, human_tokens, literal
from tui.app.widgets.chat_blocks import args_summary
from tui.app.widgets.event_log import compact_timestamp, inherited_mark
from tui.text.tool_call_text import path_argument
from tui.text.wording import plural

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import tzinfo
    from pathlib import Path

    from textual.app import ComposeResult

    from tui.agent.runtime_api import EvictedOutput

__all__ = ["EvictedBrowser", "header_row", "origin", "output_row"]

TOOL_WIDTH = 18
"""The tool column where there is room for it (it gives up columns down to :data:`MIN_TOOL_WIDTH` in a narrow
panel, so a row never wraps its time onto a line of its own)."""
MIN_TOOL_WIDTH = 6
SIZE_WIDTH = 8
TOKENS_WIDTH = 6
TIME_WIDTH = 11
"""``11-20 14:03`` (an earlier day); today's ``14:03:22`` is shorter."""


def tool_width(row_width: int | None, time_width: int = TIME_WIDTH) -> int:
    """The tool column for rows ``row_width`` cells wide whose times take ``time_width`` (``None``: as wide as it
    likes)."""
    if row_width is None:
        return TOOL_WIDTH
    return max(MIN_TOOL_WIDTH, min(TOOL_WIDTH, row_width - (1 + SIZE_WIDTH + 1 + TOKENS_WIDTH + 2 + time_width)))


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def header_row(row_width: int | None = None, time_width: int = TIME_WIDTH) -> Content:
    """Column captions matching :func:`output_row`."""
    tool = tool_width(row_width, time_width)
    return Content.styled(
        f"{'tool':<{tool}} {'size':>{SIZE_WIDTH}} {'tokens':>{TOKENS_WIDTH}}  saved", "$text-muted bold"
    )


def origin(output: EvictedOutput) -> str:
    """Where an output came from: the call's arguments (``path=src/app.py``) and its id."""
    parts = [args_summary(output.args)] if output.args else []
    if output.tool_call_id:
        parts.append(f"call {output.tool_call_id}")
    return " · ".join(part for part in parts if part)


def output_row(output: EvictedOutput, *, now: float, tz: tzinfo | None = None,
               row_width: int | None = None, time_width: int = TIME_WIDTH) -> Content:
    """Tool (literal), size, tokens, time saved; below it, the arguments and call id it came from.
    ``row_width``: the cells a row has (the tool's name gives up columns to fit); ``time_width``: the longest time
    among the rows."""
    tool = tool_width(row_width, time_width)
    first = Content.assemble(
        literal(f"{_fit(output.tool_name, tool):<{tool}}", "bold"),
        f" {human_size(output.size_bytes):>{SIZE_WIDTH}}",
        f" {human_tokens(output.tokens):>{TOKENS_WIDTH}}  ",
        (compact_timestamp(output.timestamp, now=now, tz=tz), "$text-muted"),
    )
    where = origin(output)
    notes = [literal(where, "$text-muted")] if where else []
    if output.inherited_from:
        notes.append(Content.styled(inherited_mark(output.inherited_from), "$text-muted italic"))
    return Content.assemble(first, "\n  ", Content(" · ").join(notes)) if notes else first


class EvictedBrowser(Widget):
    """A list of evicted tool outputs (tool, size, tokens, time); Enter or click opens one."""

    DEFAULT_CSS = """
    EvictedBrowser {
        width: 1fr;
        height: 1fr;
        layout: vertical;
    }
    EvictedBrowser #evicted-summary, EvictedBrowser #evicted-header {
        height: 1;
        width: 1fr;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    EvictedBrowser #evicted-summary {
        color: $text-muted;
    }
    EvictedBrowser #evicted-list {
        height: 1fr;
        border: none;
    }
    EvictedBrowser #evicted-empty {
        color: $text-muted;
        padding: 1 1;
    }
    """

    def __init__(
        self,
        outputs: Sequence[EvictedOutput] = (),
        *,
        now: Callable[[], float] = time.time,
        tz: tzinfo | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``now``/``tz`` pin the clock (tests)."""
        super().__init__(name=name, id=id, classes=classes)
        self._outputs: list[EvictedOutput] = []
        self._now = now
        self._tz = tz
        self._ready = False
        self._laid_out_for: int | None = None
        self.set_outputs(outputs)

    def compose(self) -> ComposeResult:
        yield Static(id="evicted-summary")
        yield Static(header_row(self._row_width()), id="evicted-header")
        yield OptionList(id="evicted-list")
        yield Static("No evicted tool outputs yet. Outputs over the size limit are saved here.", id="evicted-empty")

    def on_mount(self) -> None:
        self._ready = True
        self._refresh_list()

    def on_resize(self) -> None:
        if self._ready and self._laid_out_for != self._row_width():
            self._refresh_list()

    def _row_width(self) -> int | None:
        """The cells a row has: the panel less the list's padding and scroll bar (``None`` before layout)."""
        return self.size.width - 3 if self.size.width else None

    @property
    def outputs(self) -> list[EvictedOutput]:
        """The listed outputs, newest first."""
        return list(self._outputs)

    def set_outputs(self, outputs: Sequence[EvictedOutput]) -> None:
        """Replace the list (shown newest first)."""
        self._outputs = sorted(outputs, key=lambda output: output.timestamp, reverse=True)
        if self._ready:
            self._refresh_list()

    def _refresh_list(self) -> None:
        now = self._now()
        width = self._laid_out_for = self._row_width()
        times = max((len(compact_timestamp(output.timestamp, now=now, tz=self._tz)) for output in self._outputs),
                    default=TIME_WIDTH)
        option_list = self.query_one("#evicted-list", OptionList)
        highlighted = option_list.highlighted
        option_list.set_options(Option(output_row(output, now=now, tz=self._tz, row_width=width, time_width=times))
                                for output in self._outputs)
        if self._outputs:
            option_list.highlighted = highlighted if highlighted is not None and highlighted < len(self._outputs) else 0
        self.query_one("#evicted-header", Static).update(header_row(width, times))
        total = sum(output.size_bytes for output in self._outputs)
        count = len(self._outputs)
        inherited = sum(1 for output in self._outputs if output.inherited_from)
        parents = f" ({inherited} inherited)" if inherited else ""
        self.query_one("#evicted-summary", Static).update(
            f"{plural(count, 'output')}{parents} · {human_size(total)} on disk · ⏎ open"
        )
        for widget_id in ("#evicted-list", "#evicted-header"):
            self.query_one(widget_id).display = bool(self._outputs)
        self.query_one("#evicted-empty").display = not self._outputs

    @on(OptionList.OptionSelected, "#evicted-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        output = self._outputs[event.option_index]
        self.open_path(output.path, source_path=path_argument(output.args))

    def open_path(self, path: Path, *, source_path: str | None = None) -> bool:
        """Open ``path`` in the viewer; a missing file gets a clear notice instead (returns ``False``).
        ``source_path``: the file the tool read, which names the language."""
        if not path.is_file():
            self.notify(
                f"{path.name} is no longer on disk (deleted or moved): {path}",
                title="Evicted output missing",
                severity="error",
                markup=False,
            )
            return False
        from tui.app.screens.evicted_viewer import EvictedViewerScreen  # loaded when first opened

        self.app.push_screen(EvictedViewerScreen(path, source_path=source_path))
        return True
