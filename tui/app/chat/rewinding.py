"""The chat's rewinds: ``/rewind`` (and Esc Esc in an empty prompt) opens the rewind dialog; its choice is
carried out (the files restored here, or the session forked and the fork shown); each prompt with a restore
point is marked in the chat (↺)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.worker import WorkerCancelled

from tui.agent.runtime_api import RewindAPI, SessionRuntimeAPI
from tui.app.widgets.chat_blocks import UserBlock

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from textual.css.query import DOMQuery
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.worker import Worker

    from tui.app.chat.session_state import SessionState
    from tui.app.chat.session_switcher import SessionSwitcher
    from tui.app.screens.rewind_dialog import RewindChoice
    from tui.app.widgets.chat_view import ChatView

logger = logging.getLogger(__name__)

REWIND_GROUP = "rewind"


class RewindHost(Protocol):
    """What rewinding needs from the chat screen."""

    state: SessionState
    @property
    def switcher(self) -> SessionSwitcher: ...

    @property
    def ready(self) -> bool: ...

    @property
    def turn_running(self) -> bool: ...

    @property
    def chat(self) -> ChatView: ...

    def focus_prompt(self) -> None: ...

    def show_dialog(self, screen: Screen[Any] | str, done: Callable[[Any], None] | None = None) -> None: ...

    def start(self, work: Awaitable[None], group: str) -> None: ...

    def switch_workers(self) -> list[Worker[Any]]:
        """The running session-switch workers (a fork's adoption is awaited before saying it is done)."""

    def query(self, selector: type[UserBlock]) -> DOMQuery[UserBlock]: ...

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None: ...


class Rewinding:
    """Opens the rewind dialog and carries out its choice; marks the prompts that have a restore point."""

    def __init__(self, host: RewindHost) -> None:
        self.host = host

    def open(self) -> None:
        host = self.host
        if not host.ready:
            return
        runtime = host.state.runtime
        if not isinstance(runtime, RewindAPI):
            host.tell("This session has no restore points.", severity="warning")
            return
        if host.turn_running:
            host.tell("A turn is running — wait for it or press Esc before rewinding.", severity="warning")
            return
        from tui.app.screens.rewind_dialog import RewindDialog, RewindSource

        def chosen(choice: RewindChoice | None) -> None:
            if choice is None:
                host.focus_prompt()
                return
            host.start(self._carry_out(choice), REWIND_GROUP)

        host.show_dialog(RewindDialog(cast("RewindSource", runtime)), chosen)

    async def _carry_out(self, choice: RewindChoice) -> None:
        from tui.agent.rewind.restore import RewindError
        from tui.app.rewind_actions import carry_out

        host = self.host
        runtime, factory = host.state.runtime, host.state.factory
        if factory is None:
            return
        if choice.mode == "code":
            try:
                done = await carry_out(choice, runtime, factory)
            except RewindError as error:
                host.tell(str(error), severity="error", timeout=10)
                return
            await self._say(done.notice)
            host.focus_prompt()
            return
        notices: list[str] = []

        async def fork_and_restore() -> SessionRuntimeAPI:
            done = await carry_out(choice, runtime, factory)
            notices.append(done.notice)
            assert done.fork is not None
            return done.fork

        host.switcher.switch(fork_and_restore, f"rewind to before message {choice.message}")
        for worker in host.switch_workers():
            try:
                await worker.wait()
            except WorkerCancelled:  # the app is closing (or another switch replaced this one): nothing to say
                logger.info("rewind fork cancelled before it was shown")
                return
        for notice in notices:
            await self._say(notice)

    async def _say(self, notice: str) -> None:
        await self.host.chat.add_notice(notice)
        self.host.tell(notice, timeout=8)

    def mark_prompts(self) -> None:
        """Mark each prompt in the chat that has a restore point (one small file read)."""
        runtime = self.host.state.runtime
        if not isinstance(runtime, RewindAPI):
            return
        try:
            numbers = runtime.restore_point_messages()
        except OSError as error:
            logger.info("restore points unreadable: %s", error)
            return
        for block in self.host.query(UserBlock):
            if block.message_index is not None and block.message_index + 1 in numbers:
                block.mark_restore_point()
