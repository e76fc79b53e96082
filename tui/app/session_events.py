"""Chain events delivered to the UI, and switching sessions without blocking or losing the current one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from tui.agent.runtime_api import SessionRuntimeAPI
from tui.chain.events import ChainEvent
from tui.store.errors import StoreError

if TYPE_CHECKING:
    from tui.app.screens.session_picker import PickerResult
    from tui.app.shell import DeepTuiApp


@dataclass
class ChainEventArrived(Message):
    """A chain event, posted so widgets update on the UI's own schedule."""

    event: ChainEvent


class SessionSwitcher:
    """Opens the next session first (off the UI thread), then closes the previous one.

    Refused while a turn is streaming; a failed open leaves the current session as it was.
    """

    def __init__(self, app: DeepTuiApp) -> None:
        self.app = app

    def handle_pick(self, result: PickerResult) -> None:
        factory = self.app.factory
        assert factory is not None, "the picker opens only once a session is open"
        if result.action == "new":
            self.switch(factory.new_session, "new session")
        elif result.action == "fork" and result.session_id:
            session_id, upto = result.session_id, result.upto
            self.switch(lambda: factory.fork_session(session_id, upto), f"fork of {session_id}")
        elif result.action == "open" and result.session_id:
            message = result.message
            if result.session_id == self.app.runtime.info.session_id:
                if message is not None:  # a content hit in the open session: just scroll to it
                    self.app.run_worker(self.app.reveal_message(message), group="reveal", exclusive=True)
                return
            session_id = result.session_id
            self.switch(lambda: factory.open_session(session_id), f"session {session_id}", reveal=message)

    def switch(self, opener: Callable[[], Awaitable[SessionRuntimeAPI]], label: str, *,
               reveal: int | None = None) -> None:
        """Open the next session and show it; ``reveal``: the message to scroll to (a search hit)."""
        if self.app.runtime.busy:
            self.app.notify("A turn is running — wait for it or press Esc before switching sessions.",
                            severity="warning", markup=False)
            return
        self.app.run_worker(self._switch(opener, label, reveal), group="switch", exclusive=True)

    async def _switch(self, opener: Callable[[], Awaitable[SessionRuntimeAPI]], label: str,
                      reveal: int | None = None) -> None:
        try:
            runtime = await opener()
        except StoreError as error:
            self.app.notify(f"could not open {label}: {error}", severity="error", timeout=8, markup=False)
            return
        previous = self.app.runtime
        await self.app.adopt_runtime(runtime)
        await previous.aclose()
        if reveal is not None:
            await self.app.reveal_message(reveal)
        self.app.notify(f"now in {runtime.info.title} ({runtime.info.session_id})", markup=False)
