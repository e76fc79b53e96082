"""The status row under the chat: context gauge, cost, Compact button — fitted to the terminal's width.

:func:`~tui.app.widgets.status_fit.fit_status` chooses what fits; :class:`StatusRow` applies it whenever the
row's width changes or one of its widgets says its text changed (:class:`ContextGauge.Changed`,
:class:`CostMeter.Changed`).
"""

from __future__ import annotations

from textual.containers import Horizontal
from textual.widgets import Button

from tui.app.widgets.cost_meter import CostMeter
from tui.app.widgets.gauge import ContextGauge
from tui.app.widgets.status_fit import fit_status

__all__ = ["StatusRow", "compact_button"]

COMPACT_LABEL = "Compact ^g"
_COMPACT_WIDTH = len(COMPACT_LABEL) + 2 + 2  # its padding, and its margin in the stylesheet


def compact_button() -> Button:
    """The row's Compact button (Ctrl+G's; the screen handles its press)."""
    return Button(COMPACT_LABEL, id="compact-button", compact=True)


class StatusRow(Horizontal):
    """Holds the gauge, the cost meter and the Compact button; re-fits them on resize and on change.

    The row is fitted as if the button were there before it is: at start-up it comes just after the first frame
    (Textual's Button brings the largest stylesheet of any widget), and the gauge keeps its form when it does."""

    def on_resize(self) -> None:
        self.refit()

    def on_context_gauge_changed(self, message: ContextGauge.Changed) -> None:
        message.stop()
        self.refit()

    def on_cost_meter_changed(self, message: CostMeter.Changed) -> None:
        message.stop()
        self.refit()

    def refit(self) -> None:
        if not self.size.width:
            return
        gauge, cost = self.query_one(ContextGauge), self.query_one(CostMeter)
        fit = fit_status(self.size.width, gauge_width=gauge.width_of, cost_width=cost.width_of,
                         button_width=_COMPACT_WIDTH)
        gauge.form = fit.gauge
        cost.form = fit.cost
        for button in self.query_children(Button):
            button.display = fit.button

    def add_compact_button(self) -> None:
        """Mount the Compact button (once), fitted as the row already is."""
        if self.query_children(Button):
            return
        self.mount(compact_button())
        self.refit()
