"""The cost event the app and ``deep-tui run`` receive after each priced request (no pydantic-ai here,
so the app can show cost from its first frame)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from tui.chain.events import ChainEvent
from tui.store.cost_totals import CostTotals


@dataclass(frozen=True, kw_only=True)
class CostUpdated(ChainEvent):
    """After a model response (chat or summarizer): what it cost and the running totals.

    Delivered to subscribers only; the totals are kept in session.json, not in events.jsonl.
    """

    kind: ClassVar[str] = "cost"
    session: CostTotals
    turn: CostTotals = field(default_factory=CostTotals)
    last_request_usd: float | None = None
    """``None`` when the request could not be priced."""
    summarizer: bool = False
