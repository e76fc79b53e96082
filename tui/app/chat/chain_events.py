"""The open session's chain events turned into widget updates: the gauge, the cost meter, the task line, the
provider's status line, the side panels and the chat's compaction dividers.

The events come from the session (perhaps from a worker thread); the chat screen posts each as a
``MainScreen.ChainEventArrived`` message and, on the UI thread, hands it to :class:`ChainEventRouter`. The router
reaches the screen only through :class:`ChainEventHost`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tui.agent.hooks.hook_events import HookNotice
from tui.agent.models.cost_events import CostUpdated
from tui.agent.models.provider_events import ProviderEvent
from tui.agent.runtime_api import SessionRuntimeAPI, TaskStateChanged
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished, EvictedEvent, UsageEvent

if TYPE_CHECKING:
    from collections.abc import Iterable

    from textual.notifications import SeverityLevel

    from tui.app.chat.side_panels import SidePanels
    from tui.app.chat.task_controls import TaskControls
    from tui.app.widgets.chat_view import ChatView
    from tui.app.widgets.cost_meter import CostMeter
    from tui.app.widgets.provider_status import ProviderStatus


class ChainEventHost(Protocol):
    """What the router needs from the chat screen."""

    @property
    def chat(self) -> ChatView: ...

    @property
    def tasks(self) -> TaskControls: ...

    @property
    def panels(self) -> SidePanels: ...

    def current_runtime(self) -> SessionRuntimeAPI: ...

    def show_usage(self, usage: UsageEvent | None) -> None: ...

    def cost_meter(self) -> CostMeter: ...

    def provider_statuses(self) -> Iterable[ProviderStatus]: ...

    def awaiting_provider(self) -> bool: ...

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None: ...


class ChainEventRouter:
    """One chain event → the widgets that show it."""

    def __init__(self, host: ChainEventHost) -> None:
        self._host = host

    async def arrived(self, event: ChainEvent) -> None:
        """Show ``event`` (on the UI thread)."""
        host = self._host
        if isinstance(event, UsageEvent):
            host.show_usage(event)
            return
        if isinstance(event, CostUpdated):
            host.cost_meter().add(event)
            return
        if isinstance(event, TaskStateChanged):
            host.tasks.changed(event)
            return
        if isinstance(event, HookNotice):  # at once, while the turn runs
            host.tell(event.describe(), severity="warning" if event.level == "warning" else "information",
                      timeout=10)
            return
        if isinstance(event, ProviderEvent):
            for status in host.provider_statuses():
                if host.awaiting_provider():
                    status.show(event)
                else:  # a late word from a request that is over: the line says nothing untrue
                    status.clear()
            return
        host.panels.add_event(event)
        if isinstance(event, EvictedEvent):
            host.panels.refresh_evicted(host.current_runtime())
        if isinstance(event, CompactionFinished) and event.strategy in ("summary", "fallback"):
            await host.chat.add_divider(event)
        elif isinstance(event, CompactionFailed):
            await host.chat.add_failed_compaction(event)
