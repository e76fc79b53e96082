"""The provider's state, on a line above the gauge while it lasts: ``waiting for openai… 12 s``, ``HTTP 429 — retry 2/3 in 5 s``.

Fed by the session's provider events (:mod:`tui.agent.models.provider_events`); counts the seconds itself
between events; hidden while the provider is answering or nothing is asked of it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from textual.timer import Timer

    from tui.agent.models.provider_events import ProviderEvent, ProviderRetrying, ProviderWaiting

SHOW_WAITING_AFTER = 1.0
"""A request answered within this many seconds never shows "waiting" (no flicker on every request)."""
TICK_SECONDS = 0.5


class ProviderStatus(Static):
    """How long the provider has been silent, or which retry comes when (Esc cancels either); hidden otherwise."""

    DEFAULT_CSS = """
    ProviderStatus { width: 100%; height: 1; padding: 0 1; color: $warning; background: $boost; display: none;
                     text-wrap: nowrap; text-overflow: ellipsis; }
    ProviderStatus.-retrying { color: $error; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self._event: ProviderWaiting | ProviderRetrying | None = None
        self._ticker: Timer | None = None

    @property
    def text(self) -> str:
        """What the line says now ("" when hidden)."""
        return str(self.render()) if self.display else ""

    def show(self, event: ProviderEvent) -> None:
        """Follow ``event``: a wait or a retry is shown (and counted), anything else hides the line."""
        from tui.agent.models.provider_events import ProviderRetrying, ProviderWaiting  # not for the first frame

        if not isinstance(event, (ProviderWaiting, ProviderRetrying)):
            self.clear()
            return
        self._event = event
        self.set_class(isinstance(event, ProviderRetrying), "-retrying")
        if self._ticker is None:
            self._ticker = self.set_interval(TICK_SECONDS, self._tick)
        self._tick()

    def clear(self) -> None:
        """Nothing is asked of the provider (the turn ended, was cancelled, or the answer is arriving)."""
        self._event = None
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self.display = False

    def _tick(self) -> None:
        event = self._event
        if event is None:
            return
        from tui.agent.models.provider_events import ProviderRetrying, ProviderWaiting

        now = time.time()
        if isinstance(event, ProviderWaiting) and now - event.since < SHOW_WAITING_AFTER:
            self.display = False
            return
        self.update(Content(visible(event.describe(now))))  # the footer says "esc cancel"
        if isinstance(event, ProviderRetrying):
            self.tooltip = visible(f"{event.provider}: {event.reason}")
        self.display = True
