"""The context gauge: bar, percent, tokens / window, threshold marks, colour by level."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from tui.app.formatting import human_tokens
from tui.app.widgets.status_fit import FULL_BAR, GaugeForm

if TYPE_CHECKING:
    from tui.chain.events import UsageEvent

BAR_WIDTH = FULL_BAR


OFF_MARK = "┊"
"""The threshold marks while automatic compaction is off for the session (nothing runs there; the pre-flight asks)."""
OFF_LABEL = "  compaction off"


def render_gauge(event: UsageEvent | None, width: GaugeForm = BAR_WIDTH) -> Content:
    """``context ██████░░|░|▒▒  61%  122k / 200k``: marks at the two thresholds (shares of the request
    limit), and the part of the window kept for the answer and the margin shaded at the end. With automatic
    compaction off the marks are dotted (``┊``) and ``compaction off`` follows the figures.

    Narrower forms for a narrow terminal: ``"figures"`` gives ``61% 122k/200k`` (``61% 122k/200k off``),
    ``"percent"`` ``61%`` (``61% off``)."""
    if not isinstance(width, int):
        return _render_figures(event, with_tokens=width == "figures")
    if event is None:
        return Content.assemble(("context ", "$text-muted"), ("░" * width, "$text-muted"), ("  –", "$text-muted"))
    filled = min(width, round(event.fraction * width))
    marks = {min(width - 1, int(event.mark(event.compaction_threshold) * width)),
             min(width - 1, int(event.mark(event.summarize_threshold) * width))}
    reserved_from = min(width, round(event.limit / event.window * width)) if event.window else width
    colour = {"ok": "$success", "warn": "$warning", "critical": "$error"}[event.level]
    cells: list[tuple[str, str]] = []
    off = not event.auto_compact
    for position in range(width):
        if position in marks and off:
            cells.append((OFF_MARK, "bold $warning"))
        elif position in marks:
            cells.append(("┃" if position < filled else "│", f"bold {colour}" if position < filled else "$text-muted"))
        elif position < filled:
            cells.append(("█", colour))
        elif position >= reserved_from:
            cells.append(("▒", "$text-muted"))
        else:
            cells.append(("░", "$text-muted"))
    window = human_tokens(event.window)
    assumed = [("  window assumed", "$warning italic")] if event.assumed else []
    return Content.assemble(
        ("context ", "$text-muted"),
        *cells,
        (f" {event.fraction * 100:4.0f}% ", f"bold {colour}"),
        f" {human_tokens(event.tokens)} / {window}",
        *([(OFF_LABEL, "$warning")] if off else []),
        *assumed,
    )


def _render_figures(event: UsageEvent | None, *, with_tokens: bool) -> Content:
    if event is None:
        return Content.styled("context –" if with_tokens else "–", "$text-muted")
    colour = {"ok": "$success", "warn": "$warning", "critical": "$error"}[event.level]
    percent = (f"{event.fraction * 100:.0f}%", f"bold {colour}")
    off = [(" off", "$warning")] if not event.auto_compact else []  # the tooltip says what is off
    if not with_tokens:
        return Content.assemble(percent, *off)
    assumed = [("?", "$warning")] if event.assumed else []  # the tooltip says the window is assumed
    return Content.assemble(percent, f" {human_tokens(event.tokens)}/{human_tokens(event.window)}", *assumed, *off)


class ContextGauge(Static):
    """Shows the latest :class:`UsageEvent`; the CSS class ``-ok``/``-warn``/``-critical`` follows the level."""

    DEFAULT_CSS = """
    ContextGauge { width: 1fr; height: 1; padding: 0 1; }
    """

    class Changed(Message):
        """The gauge's text (and so its width) changed: the status row fits itself again."""

    usage: reactive[UsageEvent | None] = reactive(None, always_update=True)
    form: reactive[GaugeForm] = reactive[GaugeForm](BAR_WIDTH)
    """How much the status row leaves room for (see :mod:`tui.app.widgets.status_fit`)."""

    def width_of(self, form: GaugeForm) -> int:
        """Cells this gauge takes in ``form`` (with its padding)."""
        return render_gauge(self.usage, form).cell_length + 2

    def watch_form(self) -> None:
        self.update(render_gauge(self.usage, self.form))

    def watch_usage(self, usage: UsageEvent | None) -> None:
        for level in ("ok", "warn", "critical"):
            self.set_class(usage is not None and usage.level == level, f"-{level}")
        self.update(render_gauge(usage, self.form))
        self.post_message(self.Changed())
        if usage is not None:
            from tui.chain.events import describe_window_source  # with the first usage, not for the first frame

            self.tooltip = (f"{usage.tokens:,} of {usage.window:,} tokens; {describe_window_source(usage.window_source)}; "
                            f"{usage.reserve:,} kept for the answer and {usage.margin:,} for estimate error "
                            f"(▒), so a request carries at most {usage.limit:,}; "
                            + (f"compaction at {usage.compaction_threshold:.0%} and summary at "
                               f"{usage.summarize_threshold:.0%} of that" if usage.auto_compact else
                               f"automatic compaction is off for this session (┊: its threshold, "
                               f"{usage.compaction_threshold:.0%} of that); a request over the limit asks before a "
                               "summary (/context turns it back on)"))
