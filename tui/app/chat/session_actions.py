"""The chat's session commands: the picker, new, fork, fork at a message, rename, going to a search hit.

:class:`SessionActions` carries them out for the chat screen (:class:`~tui.app.chat.main_screen.MainScreen`),
through the small :class:`SessionHost` protocol; the switching itself, off the UI thread, is
:class:`~tui.app.chat.session_switcher.SessionSwitcher`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from tui.app.chat.session_state import SessionState
    from tui.app.chat.session_switcher import SessionSwitcher
    from tui.app.screens.picker_result import PickerResult
    from tui.app.screens.session_picker import SessionPickerScreen

__all__ = ["PICKER_SCREEN", "SessionActions", "SessionHost"]

PICKER_SCREEN = "sessions"

# The session picker and the fork confirmation are imported when first opened: neither is needed for
# the first frame.


class SessionHost(Protocol):
    """What the session commands need from the screen that owns the chat."""

    state: SessionState
    @property
    def switcher(self) -> SessionSwitcher: ...

    @property
    def ready(self) -> bool:
        """The session is open (else the user is told it is still opening)."""

    def refresh_title(self) -> None: ...

    def focus_prompt(self) -> None: ...

    async def scroll_to_message(self, index: int) -> bool:
        """Scroll the chat to message ``index``; False if it is not in the chat."""

    def show_dialog(self, screen: Screen[Any] | str, done: Callable[[Any], None] | None = None) -> None:
        """Push ``screen`` (or the installed screen of that name); ``done`` gets its result."""

    def keep_dialog(self, screen: Screen[Any], name: str) -> None:
        """Install ``screen`` under ``name``, to be shown again later as it was left."""

    def drop_dialog(self, screen: Screen[Any]) -> None:
        """Uninstall a screen kept by :meth:`keep_dialog`."""

    def start_in_thread(self, work: Callable[[], None], group: str) -> None:
        """Run ``work`` in a worker thread, the one worker of ``group``."""

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None:
        """A notification (plain text)."""


class SessionActions:
    """Opening the session picker, starting, forking and renaming sessions.

    Every command waits for the session to be open (:attr:`SessionHost.ready`) and goes through the
    host's switcher, which refuses to switch while a turn runs."""

    def __init__(self, host: SessionHost) -> None:
        self.host = host
        self._picker: SessionPickerScreen | None = None
        """Built on first use, then kept (see ``SessionPickerScreen.reopen``)."""

    @property
    def state(self) -> SessionState:
        return self.host.state

    def open_picker(self) -> None:
        state = self.state
        store, factory = state.store, state.factory
        if not self.host.ready or store is None or factory is None:
            return

        def chosen(result: PickerResult | None) -> None:
            if result is not None and state.factory is not None:  # the picker opens only when ready
                self.host.switcher.handle_pick(result, state.factory)

        from tui.app.screens.session_picker import SessionPickerScreen

        current = state.runtime.info.session_id
        if self._picker is None or self._picker.store is not store:
            if self._picker is not None:
                self.host.drop_dialog(self._picker)
            self._picker = SessionPickerScreen(store, current, initial=state.recent_sessions,
                                               rename_current=self._rename_current, search=factory.search)
            self.host.keep_dialog(self._picker, PICKER_SCREEN)
        else:
            self._picker.reopen(current, state.recent_sessions)
        self.host.show_dialog(PICKER_SCREEN, chosen)

    async def reveal_message(self, index: int, saved_output: str | None = None, match: str | None = None) -> None:
        """Scroll the chat to message ``index`` of the current session (a search hit); a hit inside a saved
        output (whose chat block shows only a preview) also opens that output at the match, selected."""
        if not await self.host.scroll_to_message(index):
            self.host.tell(f"message {index} is not in this session", severity="warning")
            return
        if saved_output is not None:
            from tui.app.screens.evicted_viewer import EvictedViewerScreen

            self.host.show_dialog(EvictedViewerScreen(Path(saved_output), search=match or ""))

    def _rename_current(self, title: str) -> None:
        self.state.runtime.rename(title)
        self.host.refresh_title()

    def list_sessions_ahead(self) -> None:
        """Keep a recent listing for the picker (session.json files only, off the UI thread)."""
        state = self.state

        def listing() -> None:
            if state.store is not None:
                state.recent_sessions = list(state.store.list_sessions())

        self.host.start_in_thread(listing, "list-sessions")

    def new_session(self) -> None:
        factory = self.state.factory
        if not self.host.ready or factory is None:
            return
        self.host.switcher.switch(factory.new_session, "new session")

    def fork_session(self) -> None:
        """Fork the whole session — after a confirmation (Ctrl+F with no message selected forked at once)."""
        factory = self.state.factory
        if not self.host.ready or factory is None:
            return
        from tui.app.screens.fork_confirm import whole_fork_confirmation

        current = self.state.runtime.info.session_id

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.host.switcher.switch(lambda: factory.fork_session(current), f"fork of {current}")
            else:
                self.host.focus_prompt()

        self.host.show_dialog(whole_fork_confirmation(self.state.runtime), answered)

    def fork_at(self, upto: int) -> None:
        """Fork at a chat message — after a confirmation that names the message."""
        factory = self.state.factory
        if not self.host.ready or factory is None:
            return
        from tui.app.screens.fork_confirm import fork_confirmation

        current = self.state.runtime.info.session_id

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.host.switcher.switch(lambda: factory.fork_session(current, upto),
                                          f"fork of {current} at message {upto}")
            else:
                self.host.focus_prompt()

        self.host.show_dialog(fork_confirmation(self.state.runtime, upto), answered)
