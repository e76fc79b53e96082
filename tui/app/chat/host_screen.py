"""The chat screen's side of its helpers' protocols: notices, dialogs and workers.

:class:`HostScreen` is the base of :class:`~tui.app.chat.main_screen.MainScreen`. It holds the small, general
answers the chat's helpers ask for through their protocols (``PromptHost``, ``SessionHost``, ``ModelHost``,
``DialogHost``, ``ListingHost``, …): a notification in plain text, a dialog pushed, kept or dropped, a worker or
a thread started, a call back from a thread, whether the session is ready, the status widgets looked up. What is
the chat's own (its layout, turns, the widgets' messages, its commands) stays on ``MainScreen``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from tui.app.widgets.cost_meter import CostMeter
from tui.app.widgets.prompt_input import CommandSuggestions, PromptInput
from tui.app.widgets.status_row import StatusRow

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

    from textual.notifications import SeverityLevel
    from textual.worker import Worker

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.app.chat.session_state import SessionState
    from tui.app.widgets.prompt_queue import PromptQueue
    from tui.app.widgets.provider_status import ProviderStatus
    from tui.app.widgets.turn_activity import TurnActivity

__all__ = ["HostScreen"]


class HostScreen(Screen[None]):
    """A screen that answers its helpers' protocols: notices, dialogs, workers, threads, the status widgets."""

    state: SessionState
    """The open session (shared with the App, which opens the first one); set by the subclass."""

    @property
    def ready(self) -> bool:
        """False while the session is still opening (actions that need it say so)."""
        if self.state.opening:
            self.notify("The session is still opening…", severity="warning", timeout=3, markup=False)
            return False
        return True

    def current_runtime(self) -> SessionRuntimeAPI:
        return self.state.runtime

    def say(self, message: str, timeout: float) -> None:
        self.notify(message, timeout=timeout, markup=False)

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None:
        self.notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def show_dialog(self, screen: Screen[Any] | str, done: Callable[[Any], None] | None = None) -> None:
        self.app.push_screen(screen, done)

    def keep_dialog(self, screen: Screen[Any], name: str) -> None:
        self.app.install_screen(screen, name=name)

    def drop_dialog(self, screen: Screen[Any]) -> None:
        self.app.uninstall_screen(screen)

    def is_shown(self) -> bool:
        return self.app.screen is self

    def start(self, work: Awaitable[None], group: str) -> None:
        self.run_worker(work, group=group, exclusive=True)

    def switch_workers(self) -> list[Worker[Any]]:
        return [worker for worker in self.workers if worker.group == "switch" and worker.is_running]

    def start_in_thread(self, work: Callable[[], None], group: str) -> None:
        self.run_worker(work, thread=True, group=group, exclusive=True)

    def call_from_thread(self, callback: Callable[[Any], None], value: Any) -> None:
        self.app.call_from_thread(callback, value)

    def listing_arrived(self) -> None:
        for prompt in self.query(PromptInput):
            prompt.refresh_suggestions()

    @property
    def activity(self) -> TurnActivity:
        from tui.app.widgets.turn_activity import TurnActivity

        self.mount_deferred()
        return self.query_one(TurnActivity)

    @property
    def queue(self) -> PromptQueue:
        from tui.app.widgets.prompt_queue import PromptQueue

        self.mount_deferred()
        return self.query_one(PromptQueue)

    def mount_deferred(self) -> None:
        """What the first frame does without, mounted (and imported) just after it; nothing shows it before a turn,
        a wait, a todo, a mode, a queued prompt or a typed ``/``: a line of its own while a turn runs, one while the
        provider keeps us waiting, the mode and the todo in progress above the gauge, the queue and the command
        suggestions above the prompt; and the Compact button (the row is fitted for it already)."""
        if self.query_children("#turn-activity"):
            return
        from tui.app.widgets.prompt_queue import PromptQueue
        from tui.app.widgets.provider_status import ProviderStatus
        from tui.app.widgets.task_line import TaskLine
        from tui.app.widgets.turn_activity import TurnActivity

        status = self.query_one(StatusRow)
        self.mount(TurnActivity(id="turn-activity"), ProviderStatus(id="provider-status"), TaskLine(id="task-line"),
                   before=status)
        prompt = self.query_one(PromptInput)
        self.mount(PromptQueue(id="queue"), CommandSuggestions(id="suggestions"), before=prompt)
        status.add_compact_button()
        if prompt.text:  # typed before the first frame ("/he…"): its suggestions now
            self.call_after_refresh(prompt.refresh_suggestions)

    def cost_meter(self) -> CostMeter:
        return self.query_one(CostMeter)

    def provider_statuses(self) -> Iterable[ProviderStatus]:
        from tui.app.widgets.provider_status import ProviderStatus

        return self.query(ProviderStatus)

    async def run_command(self, action: str) -> None:
        await self.app.run_action(action)  # the registry's actions are the App's (its global keys)
