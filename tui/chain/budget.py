"""How much of the window a request may fill: the window, minus room for the answer, minus a margin.

Providers count the answer inside the window, so a request that fills the window to its last token
fails or gets a truncated answer; and an estimate can be wrong by a few percent. Every threshold and
the pre-flight work against :attr:`WindowBudget.limit`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tui.base.config import ContextSettings

AUTO_RESERVE_FRACTION = 0.10
AUTO_RESERVE_MIN = 512
AUTO_RESERVE_MAX = 16_000
MIN_LIMIT_FRACTION = 0.5
"""Reserve and margin together never take more than half the window."""


@dataclass(frozen=True)
class WindowBudget:
    """The window and what a request may use of it."""

    window: int
    reserve: int
    """Tokens left for the answer: the request's ``max_tokens`` or ``[context] output_reserve``."""
    margin: int
    """Tokens kept free for estimate error."""

    @classmethod
    def for_window(cls, window: int, settings: ContextSettings, max_tokens: int | None = None) -> WindowBudget:
        reserve = max_tokens if max_tokens else settings.output_reserve
        if reserve is None:
            reserve = min(AUTO_RESERVE_MAX, max(AUTO_RESERVE_MIN, int(window * AUTO_RESERVE_FRACTION)))
        margin = int(window * settings.safety_margin)
        most = int(window * (1 - MIN_LIMIT_FRACTION))
        if reserve + margin > most:  # a tiny window or a huge max_tokens: keep half the window for the request
            reserve = max(0, most - margin)
        return cls(window=window, reserve=reserve, margin=margin)

    @property
    def limit(self) -> int:
        """The most tokens a request may carry."""
        return self.window - self.reserve - self.margin

    def at(self, fraction: float) -> float:
        """``fraction`` of the limit (the compaction and summary thresholds)."""
        return fraction * self.limit


def with_compaction(settings: ContextSettings, *, threshold: float | None, auto: bool | None,
                    summarize: float | None = None) -> ContextSettings:
    """``settings`` with the automatic compaction threshold moved (the summary threshold moves with it, keeping
    their distance, unless ``summarize`` gives it) and/or automatic compaction turned on or off; ``ConfigError``
    for a threshold out of range."""
    if threshold is not None:
        gap = settings.summarize_threshold - settings.compaction_threshold
        settings = replace(settings, compaction_threshold=threshold,
                           summarize_threshold=summarize if summarize is not None
                           else min(0.99, max(threshold, threshold + gap)))
    if auto is not None:
        settings = replace(settings, auto_compact=auto)
    settings.validate()
    return settings
