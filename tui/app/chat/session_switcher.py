"""Switching sessions without blocking or losing the current one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tui.store.store_errors import StoreError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from textual.notifications import SeverityLevel

    from tui.agent.runtime_api import RuntimeFactoryAPI, SessionRuntimeAPI
    from tui.app.screens.picker_result import PickerResult


class Notify(Protocol):
    def __call__(self, message: str, *, severity: SeverityLevel = ..., timeout: float | None = ...,
                 markup: bool = ...) -> None: ...


@dataclass(frozen=True)
class SwitchHooks:
    """What switching needs from the chat screen, as callables (the switcher holds no reference to it)."""

    current: Callable[[], SessionRuntimeAPI]
    """The session shown now."""
    adopt: Callable[[SessionRuntimeAPI], Awaitable[None]]
    """Show an opened session (the switcher closes the previous one after)."""
    reveal: Callable[[int, str | None, str | None], Awaitable[None]]
    """Scroll to a message of the session shown; for a hit in a saved output, also open that file (its path)
    at the matched text."""
    notify: Notify
    start: Callable[[Awaitable[None], str], object]
    """Run a coroutine as an exclusive worker of the named group."""


class SessionSwitcher:
    """Opens the next session first (off the UI thread), then closes the previous one.

    Refused while a turn is streaming; a failed open leaves the current session as it was.
    """

    def __init__(self, hooks: SwitchHooks) -> None:
        self.hooks = hooks

    def handle_pick(self, result: PickerResult, factory: RuntimeFactoryAPI) -> None:
        """Carry out the picker's choice: new, fork or open."""
        if result.action == "new":
            self.switch(factory.new_session, "new session")
        elif result.action == "fork" and result.session_id:
            session_id, upto = result.session_id, result.upto
            self.switch(lambda: factory.fork_session(session_id, upto), f"fork of {session_id}")
        elif result.action == "open" and result.session_id:
            message, saved, match = result.message, result.saved_output, result.match
            reveal = None if message is None else (lambda: self.hooks.reveal(message, saved, match))
            if result.session_id == self.hooks.current().info.session_id:
                if reveal is not None:  # a content hit in the open session: just scroll to it
                    self.hooks.start(reveal(), "reveal")
                return
            session_id = result.session_id
            self.switch(lambda: factory.open_session(session_id), f"session {session_id}", reveal=reveal)

    def switch(self, opener: Callable[[], Awaitable[SessionRuntimeAPI]], label: str, *,
               reveal: Callable[[], Awaitable[None]] | None = None) -> None:
        """Open the next session and show it; ``reveal``: then go to a search hit in it."""
        if self.hooks.current().busy:
            self.hooks.notify("A turn is running — wait for it or press Esc before switching sessions.",
                              severity="warning", markup=False)
            return
        self.hooks.start(self._switch(opener, label, reveal), "switch")

    async def _switch(self, opener: Callable[[], Awaitable[SessionRuntimeAPI]], label: str,
                      reveal: Callable[[], Awaitable[None]] | None = None) -> None:
        try:
            runtime = await opener()
        except StoreError as error:
            self.hooks.notify(f"could not open {label}: {error}", severity="error", timeout=8, markup=False)
            return
        previous = self.hooks.current()
        await self.hooks.adopt(runtime)
        await previous.aclose()
        if reveal is not None:
            await reveal()
        self.hooks.notify(f"now in {runtime.info.title} ({runtime.info.session_id})", markup=False)
