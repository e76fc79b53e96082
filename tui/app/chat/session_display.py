"""The open session on the chat screen: shown at start, adopted on a switch, and what it says once open.

:class:`SessionDisplay` wires a session to the dialogs it asks through (:class:`Approvers`), subscribes the screen
to its chain events, and shows it — the title, the usage and cost, the prompt history, the panels, the
transcript (with the welcome on a new session), the restore-point marks, its warnings and the sandbox notice.
It reaches the chat screen only through :class:`DisplayHost`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from tui.agent.runtime_api import SessionRuntimeAPI, TaskStateAPI
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished, UsageEvent

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from textual.notifications import SeverityLevel

    from tui.app.chat.prompt_flow import PromptFlow
    from tui.app.chat.session_actions import SessionActions
    from tui.app.chat.session_state import Approvers, SessionState
    from tui.app.chat.side_panels import SidePanels
    from tui.app.chat.task_controls import TaskControls
    from tui.app.widgets.chat_view import ChatView
    from tui.app.widgets.cost_meter import CostMeter
    from tui.app.widgets.prompt_queue import PromptQueue
    from tui.app.widgets.provider_status import ProviderStatus

logger = logging.getLogger(__name__)

SANDBOX_CHECK_GROUP = "sandbox-check"
"""The worker group of the probe that says whether shell commands can run sandboxed."""


class DisplayHost(Protocol):
    """What the session display needs from the chat screen."""

    @property
    def state(self) -> SessionState: ...

    @property
    def prompts(self) -> PromptFlow: ...

    @property
    def panels(self) -> SidePanels: ...

    @property
    def tasks(self) -> TaskControls: ...

    @property
    def sessions(self) -> SessionActions: ...

    @property
    def chat(self) -> ChatView: ...

    @property
    def queue(self) -> PromptQueue: ...

    def refresh_title(self) -> None: ...

    def show_usage(self, usage: UsageEvent | None) -> None: ...

    def cost_meter(self) -> CostMeter: ...

    def provider_statuses(self) -> Iterable[ProviderStatus]: ...

    def mark_restore_points(self) -> None: ...

    def is_shown(self) -> bool: ...

    def focus_prompt(self) -> None: ...

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None: ...

    def start_in_thread(self, work: Callable[[], None], group: str) -> None: ...

    def call_from_thread(self, callback: Callable[[Any], None], value: Any) -> None: ...


class SessionDisplay:
    """Shows the session in :attr:`DisplayHost.state` and follows it through switches."""

    def __init__(self, host: DisplayHost, approvers: Approvers, on_event: Callable[[ChainEvent], None]) -> None:
        """``approvers``: the dialogs every session shown here asks through; ``on_event``: told each chain event of
        the session shown (from any thread)."""
        self._host = host
        self._approvers = approvers
        self._on_event = on_event
        runtime = host.state.runtime
        self._unsubscribe = runtime.subscribe(on_event)
        self._wire(runtime)
        self._welcome_done = False
        """The first prompt was sent: the welcome does not come back in this run."""

    def _wire(self, runtime: SessionRuntimeAPI) -> None:
        approvers = self._approvers
        runtime.set_write_approver(approvers.writes)  # file writes ask first (as [tools] writes says)
        runtime.set_command_approver(approvers.commands)  # so do shell commands ([tools] commands)
        if isinstance(runtime, TaskStateAPI):  # with compaction off, a request over the window asks first
            runtime.set_summary_consent(approvers.summary)

    async def show_opened(self) -> None:
        """The session given at start-up is open: show it (the usage, cost, prompt history and transcript)."""
        host = self._host
        self._hold_catch_up()
        host.show_usage(self._initial_usage())
        host.cost_meter().show_session(host.state.runtime.session_cost)
        host.prompts.use_session(host.state.runtime)
        await self.show_current()
        self._hold_catch_up(painted=True)
        self.show_warnings()
        host.tasks.show()
        host.sessions.list_sessions_ahead()

    async def adopt(self, runtime: SessionRuntimeAPI) -> None:
        """Show ``runtime`` (already open); the caller closes the previous one."""
        host = self._host
        logger.info("session %s open (model %s)", runtime.info.session_id, runtime.info.model_name)
        self._hold_catch_up()
        self._unsubscribe()
        host.state.runtime = runtime
        self._unsubscribe = runtime.subscribe(self._on_event)
        self._wire(runtime)
        host.refresh_title()
        host.prompts.use_session(runtime)
        host.show_usage(self._initial_usage())
        host.cost_meter().show_session(runtime.session_cost)
        for status in host.provider_statuses():  # whatever the last session was waiting for is over
            status.clear()
        await host.panels.adopt(runtime)
        host.tasks.show()
        await self.show_current()
        self._hold_catch_up(painted=True)
        host.sessions.list_sessions_ahead()
        if host.is_shown():
            host.focus_prompt()  # after any switch (fork, new, open) keys go to the prompt

    def _hold_catch_up(self, *, painted: bool = False) -> None:
        """The search index's background catch-up waits while the session is shown, until a moment after its
        last page is painted (``painted``: the page is mounted; the hold ends after the next refresh)."""
        factory = self._host.state.factory
        if factory is None:
            return
        from tui.store.search.giving_way import AFTER_PAINT_SECONDS, OPENING_SECONDS  # not needed for the first frame

        give_way = factory.search.give_way
        if painted:
            self._host.chat.call_after_refresh(give_way.hold, AFTER_PAINT_SECONDS)
        else:
            give_way.hold(OPENING_SECONDS)

    def _initial_usage(self) -> UsageEvent | None:
        runtime = self._host.state.runtime
        if runtime.last_usage is not None:
            return runtime.last_usage
        usage = [event for event in runtime.past_events() if isinstance(event, UsageEvent)]
        return usage[-1] if usage else None

    async def show_current(self) -> None:
        """The session's transcript (with its compactions), the welcome on a new session, the restore points."""
        host = self._host
        runtime = host.state.runtime
        past = runtime.past_events()
        finished = [e for e in past if isinstance(e, CompactionFinished)]
        failed = [e for e in past if isinstance(e, CompactionFailed)]
        chat = host.chat
        await chat.show_session(runtime, finished, failed)
        if not self._welcome_done and runtime.info.session_id and runtime.history_count() == 0 \
                and not len(host.queue):
            from tui.app.widgets.welcome import WelcomeBlock

            await chat.mount(WelcomeBlock.for_session(runtime, host.state.settings))
        host.mark_restore_points()

    def dismiss_welcome(self) -> None:
        """The first prompt: the welcome has done its job."""
        self._welcome_done = True
        for welcome in self._host.chat.query("#welcome"):
            welcome.remove()

    def show_warnings(self) -> None:
        """The session's warnings, each logged and notified; then the sandbox probe."""
        host = self._host
        runtime = host.state.runtime
        for warning in runtime.info.warnings:
            logger.warning("session %s: %s", runtime.info.session_id, warning)
            host.tell(warning, severity="warning", timeout=10)
        host.start_in_thread(self._check_sandbox, SANDBOX_CHECK_GROUP)

    def _check_sandbox(self) -> None:
        """Say at once when shell commands cannot run sandboxed (the probe runs a process: off the UI thread)."""
        notice = self._host.state.runtime.sandbox_notice()
        if notice:
            logger.warning("%s", notice)
            self._host.call_from_thread(self._sandbox_notice, notice)

    def _sandbox_notice(self, notice: str) -> None:
        self._host.tell(notice, severity="warning", timeout=10)
