"""Money as deep-tui shows it: one formatting for the gauge line, /context, the picker,
``deep-tui sessions`` and the event log. An unknown price reads "price unknown", never $0."""

from __future__ import annotations

from typing import Protocol

from tui.text.wording import plural

__all__ = ["FREE_OFFLINE", "NOT_RECORDED", "PRICE_UNKNOWN", "CostTotals", "compaction_cost_text", "format_usd",
           "totals_details", "totals_label"]


class CostTotals(Protocol):
    """What these words read of a cost record (the store's :class:`tui.store.cost_totals.CostTotals` is one):
    a small protocol, so the text layer never reaches up into the store."""

    @property
    def input_usd(self) -> float: ...

    @property
    def cached_input_usd(self) -> float: ...

    @property
    def output_usd(self) -> float: ...

    @property
    def summarizer_usd(self) -> float: ...

    @property
    def requests(self) -> int: ...

    @property
    def unpriced_requests(self) -> int: ...

    @property
    def since(self) -> float | None: ...

    @property
    def total_usd(self) -> float: ...

    @property
    def complete(self) -> bool: ...

PRICE_UNKNOWN = "price unknown"
NOT_RECORDED = "–"
FREE_OFFLINE = "free (offline)"
"""The cost of a session on the offline model: it makes no priced request ($0.00 would read like one)."""


def _free_offline(totals: CostTotals | None, offline: bool) -> bool:
    return offline and (totals is None or (totals.total_usd == 0 and not totals.unpriced_requests))


def format_usd(value: float) -> str:
    """``0.0042`` → ``"$0.0042"``, ``0.4213`` → ``"$0.42"``, ``12.3`` → ``"$12.30"``, ``0`` → ``"$0.00"``."""
    if value == 0:
        return "$0.00"
    if abs(value) < 0.01:
        return f"${value:.4f}"
    return f"${value:,.2f}"


def totals_label(totals: CostTotals | None, *, offline: bool = False) -> str:
    """A session's or turn's cost in a few characters: ``$1.23``, ``≥$1.23`` (some requests are not
    priced, or tracking began after the session started), ``price unknown``, or ``–`` (not recorded);
    ``free (offline)`` for a session on the offline model (``offline``) that spent nothing."""
    if _free_offline(totals, offline):
        return FREE_OFFLINE
    if totals is None:
        return NOT_RECORDED
    if totals.requests == 0:
        return PRICE_UNKNOWN if totals.unpriced_requests else ("$0.00" if totals.since is None else NOT_RECORDED)
    value = format_usd(totals.total_usd)
    return value if totals.complete else f"≥{value}"


def totals_details(totals: CostTotals | None, *, offline: bool = False) -> str:
    """The breakdown: input, cached input, output, the summarizer's share, and what is missing (``offline``: the
    session is on the offline model)."""
    if _free_offline(totals, offline):
        return f"{FREE_OFFLINE}: the offline model is no LLM and makes no priced request"
    if totals is None:
        return "not recorded for this session"
    if totals.requests == 0 and totals.unpriced_requests == 0:
        if totals.since is not None:
            return "not recorded (the session began before deep-tui priced requests); no request since"
        return "$0.00, no request answered yet"  # a cancelled request was made, but reported no usage
    parts = [f"input {format_usd(totals.input_usd)}", f"cached input {format_usd(totals.cached_input_usd)}",
             f"output {format_usd(totals.output_usd)}"]
    if totals.summarizer_usd:
        parts.append(f"of which summaries {format_usd(totals.summarizer_usd)}")
    text = f"{totals_label(totals)} ({', '.join(parts)}) over {totals.requests} priced request" + (
        "s" if totals.requests != 1 else "")
    if totals.unpriced_requests:
        count = totals.unpriced_requests
        text += f"; {plural(count, 'request')} with {PRICE_UNKNOWN} not included"
    if totals.since is not None:
        text += "; requests before cost tracking began are not included"
    return text


def compaction_cost_text(*, priced: bool, cost_usd: float | None, cost_requests: int,
                         saves_per_request: float | None = None, saved_tokens: int = 0) -> str | None:
    """``"cost $0.0042 · saves ≈$0.29/request"`` for a compaction; ``None`` when it was never priced
    (an event recorded before deep-tui priced compactions)."""
    if not priced:
        return None
    if cost_requests:
        parts = [f"cost {format_usd(cost_usd)}" if cost_usd is not None else f"cost: {PRICE_UNKNOWN}"]
    else:
        parts = ["no model call"]
    if saved_tokens > 0:
        parts.append(f"saves ≈{format_usd(saves_per_request)}/request" if saves_per_request is not None
                     else f"saving: {PRICE_UNKNOWN}")
    return " · ".join(parts)
