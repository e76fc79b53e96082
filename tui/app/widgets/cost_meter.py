"""The cost on the gauge line: this turn and this session, priced by genai-prices.

Shows nothing until the session has spent something or made a request nobody can price
(the offline stand-in is free and stays quiet); the tooltip has the breakdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from tui.app.widgets.status_fit import CostForm
from tui.text.cost_text import PRICE_UNKNOWN, format_usd, totals_details, totals_label

if TYPE_CHECKING:
    from tui.agent.models.cost_events import CostUpdated
    from tui.store.cost_totals import CostTotals


def _worth_showing(totals: CostTotals | None) -> bool:
    return totals is not None and (totals.total_usd > 0 or totals.unpriced_requests > 0)


def render_cost(session: CostTotals | None, turn: CostTotals | None = None, form: CostForm = "both") -> Content:
    """``turn $0.02 · session $1.23`` (``price unknown`` for what cannot be priced); empty when free.
    ``form``: ``"session"`` leaves the turn out, ``"none"`` shows nothing (the row is too narrow)."""
    if not _worth_showing(session) or form == "none":
        return Content("")
    pieces: list[tuple[str, str] | str] = []
    if form == "both" and turn is not None and (turn.requests or turn.unpriced_requests):
        pieces += [("turn ", "$text-muted"), totals_label(turn), ("  ", "")]
    label = totals_label(session)
    pieces += [("session ", "$text-muted"), (label, "$warning" if label == PRICE_UNKNOWN else "bold")]
    return Content.assemble(*pieces)


class CostMeter(Static):
    """What the current turn and session cost so far."""

    DEFAULT_CSS = """
    CostMeter { width: auto; height: 1; padding: 0 1; }
    """

    class Changed(Message):
        """The meter's text (and so its width) changed: the status row fits itself again."""

    form: reactive[CostForm] = reactive[CostForm]("both")
    """How much the status row leaves room for (see :mod:`tui.app.widgets.status_fit`)."""

    def width_of(self, form: CostForm) -> int:
        """Cells this meter takes in ``form`` (with its padding; 0 when it shows nothing)."""
        text = render_cost(self.session_cost, self.turn_cost, form)
        return text.cell_length + 2 if text.cell_length else 0

    def watch_form(self) -> None:
        self._refresh_text(changed=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self.session_cost: CostTotals | None = None
        self.turn_cost: CostTotals | None = None
        self.last_request_usd: float | None = None

    def show_session(self, totals: CostTotals | None) -> None:
        """A session was opened: its recorded totals, no turn yet."""
        self.session_cost, self.turn_cost, self.last_request_usd = totals, None, None
        self._refresh_text()

    def add(self, event: CostUpdated) -> None:
        """After each priced (or unpriceable) request."""
        self.session_cost, self.turn_cost, self.last_request_usd = event.session, event.turn, event.last_request_usd
        self._refresh_text()

    def _refresh_text(self, *, changed: bool = True) -> None:
        self.update(render_cost(self.session_cost, self.turn_cost, self.form))
        self.display = _worth_showing(self.session_cost) and self.form != "none"
        if changed:
            self.post_message(self.Changed())
        last = (PRICE_UNKNOWN if self.last_request_usd is None else format_usd(self.last_request_usd)) \
            if self.turn_cost is not None else "–"
        self.tooltip = Content(f"last request: {last}\nthis turn: {totals_details(self.turn_cost)}\n"
                               f"this session: {totals_details(self.session_cost)}\nprices from genai-prices")
