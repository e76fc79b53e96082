"""A session's spend as kept in session.json (``"cost"``): sums in USD and what could not be priced.

Prices come from genai-prices (``tui.agent.models.cost``); this module only adds and stores
them, so the store does not depend on the agent. No Textual here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass
class CostTotals:
    """USD spent by a session's model requests (chat and summarizer), by kind of token."""

    input_usd: float = 0.0
    """Input tokens not read from or written to a prompt cache."""
    cached_input_usd: float = 0.0
    """Input tokens read from (or written to) a prompt cache."""
    output_usd: float = 0.0
    summarizer_usd: float = 0.0
    """The part of the total the summarizer's own requests cost (compactions)."""
    requests: int = 0
    """Requests priced (their cost is in the sums)."""
    unpriced_requests: int = 0
    """Requests genai-prices has no price for (their cost is NOT in the sums)."""
    since: float | None = None
    """Set when tracking began on a session that already had history: the sums miss what came before."""

    @property
    def total_usd(self) -> float:
        return self.input_usd + self.cached_input_usd + self.output_usd

    @property
    def complete(self) -> bool:
        """Every request of the session is priced and counted."""
        return self.unpriced_requests == 0 and self.since is None

    def add(self, *, input_usd: float, cached_input_usd: float, output_usd: float, summarizer: bool = False) -> None:
        self.input_usd += input_usd
        self.cached_input_usd += cached_input_usd
        self.output_usd += output_usd
        if summarizer:
            self.summarizer_usd += input_usd + cached_input_usd + output_usd
        self.requests += 1

    def add_unpriced(self) -> None:
        self.unpriced_requests += 1

    def copy(self) -> CostTotals:
        return CostTotals(**asdict(self))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> CostTotals | None:
        """Tolerates missing and unknown keys; anything unreadable is ``None`` (cost not recorded)."""
        if not isinstance(data, dict):
            return None
        values: dict[str, Any] = {}
        try:
            for spec in fields(cls):
                if spec.name not in data or data[spec.name] is None:
                    continue
                kind = int if spec.name in ("requests", "unpriced_requests") else float
                values[spec.name] = kind(data[spec.name])
        except (TypeError, ValueError):
            return None
        return cls(**values)
