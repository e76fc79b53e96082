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

__all__ = ["StatusRow"]


class StatusRow(Horizontal):
    """Holds the gauge, the cost meter and the Compact button; re-fits them on resize and on change."""

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
        gauge, cost, button = self.query_one(ContextGauge), self.query_one(CostMeter), self.query_one(Button)
        button_width = len(str(button.label)) + 2 + 2  # its padding, and its margin in the stylesheet
        fit = fit_status(self.size.width, gauge_width=gauge.width_of, cost_width=cost.width_of,
                         button_width=button_width)
        gauge.form = fit.gauge
        cost.form = fit.cost
        button.display = fit.button
