"""Fitting the status row to the terminal's width: which form of the gauge, the cost and the button it shows.

The gauge is the app's central figure, so it is the last thing to lose space: when the row is too narrow,
the turn's cost goes first, then the session's (the bar may shorten to 20 cells to keep it), then the bar
shortens (down to :data:`MIN_BAR`), then the bar goes (``61% 122k/200k``), then the Compact button (Ctrl+G
still compacts), and only then the figures (``61%``). :func:`fit_status` makes that choice from the width of
each variant; pure (no Textual), so the widgets that show the forms and the row that applies them all use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CANDIDATES", "FULL_BAR", "MIN_BAR", "CostForm", "GaugeForm", "StatusFit", "fit_status"]

GaugeForm = int | Literal["figures", "percent"]
"""A bar of that many cells (with percent and tokens), the figures alone, or the percent alone."""
CostForm = Literal["both", "session", "none"]

FULL_BAR = 30
MIN_BAR = 16


@dataclass(frozen=True)
class StatusFit:
    """What the status row shows."""

    gauge: GaugeForm
    cost: CostForm
    button: bool


CANDIDATES: tuple[StatusFit, ...] = (
    StatusFit(FULL_BAR, "both", True),
    StatusFit(FULL_BAR, "session", True),
    StatusFit(24, "session", True),
    StatusFit(20, "session", True),
    StatusFit(FULL_BAR, "none", True),
    StatusFit(24, "none", True),
    StatusFit(MIN_BAR, "none", True),
    StatusFit("figures", "none", True),
    StatusFit("figures", "none", False),
    StatusFit("percent", "none", False),
)
"""Richest first; the first that fits is shown."""


def fit_status(width: int, *, gauge_width: Callable[[GaugeForm], int], cost_width: Callable[[CostForm], int],
               button_width: int) -> StatusFit:
    """The richest :data:`CANDIDATES` entry whose parts add up to at most ``width`` cells."""
    for candidate in CANDIDATES:
        used = gauge_width(candidate.gauge) + cost_width(candidate.cost) + (button_width if candidate.button else 0)
        if used <= width:
            return candidate
    return CANDIDATES[-1]
