"""The context gauge: bar, percent, tokens / window, threshold marks, colour by level."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui.app.formatting import human_tokens
from tui.chain.events import UsageEvent

BAR_WIDTH = 30


def gauge_level(event: UsageEvent) -> str:
    if event.fraction >= event.summarize_threshold:
        return "critical"
    if event.fraction >= event.compaction_threshold:
        return "warn"
    return "ok"


def render_gauge(event: UsageEvent | None, width: int = BAR_WIDTH) -> Content:
    """``context ██████░░|░|░  61%  122k / 200k`` with marks at the two thresholds."""
    if event is None:
        return Content.assemble(("context ", "$text-muted"), ("░" * width, "$text-muted"), ("  –", "$text-muted"))
    filled = min(width, round(event.fraction * width))
    marks = {min(width - 1, int(event.compaction_threshold * width)), min(width - 1, int(event.summarize_threshold * width))}
    level = gauge_level(event)
    colour = {"ok": "$success", "warn": "$warning", "critical": "$error"}[level]
    cells: list[tuple[str, str]] = []
    for position in range(width):
        if position in marks:
            cells.append(("┃" if position < filled else "│", f"bold {colour}" if position < filled else "$text-muted"))
        elif position < filled:
            cells.append(("█", colour))
        else:
            cells.append(("░", "$text-muted"))
    window = human_tokens(event.window)
    assumed = [("  window assumed", "$warning italic")] if event.assumed else []
    return Content.assemble(
        ("context ", "$text-muted"),
        *cells,
        (f" {event.fraction * 100:4.0f}% ", f"bold {colour}"),
        f" {human_tokens(event.tokens)} / {window}",
        *assumed,
    )


class ContextGauge(Static):
    """Shows the latest :class:`UsageEvent`; the CSS class ``-ok``/``-warn``/``-critical`` follows the level."""

    DEFAULT_CSS = """
    ContextGauge { width: 1fr; height: 1; padding: 0 1; }
    """

    usage: reactive[UsageEvent | None] = reactive(None, always_update=True)

    def watch_usage(self, usage: UsageEvent | None) -> None:
        for level in ("ok", "warn", "critical"):
            self.set_class(usage is not None and gauge_level(usage) == level, f"-{level}")
        self.update(render_gauge(usage))
        if usage is not None:
            self.tooltip = (f"{usage.tokens:,} of {usage.window:,} tokens; window from {usage.window_source}"
                            f"{' (assumed)' if usage.assumed else ''}; compaction at "
                            f"{usage.compaction_threshold:.0%}, summary at {usage.summarize_threshold:.0%}")
