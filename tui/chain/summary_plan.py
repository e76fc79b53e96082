"""What a summary would replace and keep, said before it runs (kept free of pydantic-ai for the app)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SummaryPlan:
    """What a summary would replace and keep verbatim (the compact dialog shows it before it runs)."""

    summarized_messages: int
    summarized_tokens: int
    kept_messages: int
    kept_tokens: int
    has_earlier_summary: bool

    @property
    def possible(self) -> bool:
        return self.summarized_messages > 0
