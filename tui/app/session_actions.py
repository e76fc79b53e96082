"""The app's session commands: the picker, new, fork, fork at a message, rename, and the title bar.

:class:`SessionActions` is a base class of :class:`~tui.app.app.DeepTuiApp` (which sets the state
declared on it); the switching itself, off the UI thread, is :class:`~tui.app.session_events.SessionSwitcher`'s.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App

from tui.agent.runtime_api import RuntimeFactoryAPI, SessionRuntimeAPI
from tui.app.session_events import SessionSwitcher
from tui.app.widgets.blocks import ForkAt
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.title_bar import TitleBar

if TYPE_CHECKING:
    from tui.app.screens.session_picker import PickerResult, SessionPickerScreen
    from tui.app.screens.session_rows import SessionMetaLike, SessionStoreLike
    from tui.base.config import Settings

__all__ = ["PICKER_SCREEN", "SessionActions"]

PICKER_SCREEN = "sessions"

# The session picker and the fork confirmation are imported when first opened: neither is needed for
# the first frame.


class SessionActions(App[int]):
    """Opening the session picker, starting, forking and renaming sessions, and showing which one is open.

    Every command waits for the session to be open (:attr:`ready`) and goes through :attr:`switcher`,
    which refuses to switch while a turn runs."""

    factory: RuntimeFactoryAPI | None
    """Opens sessions; ``None`` while the first session is still opening."""
    store: SessionStoreLike | None
    """The sessions on disk; ``None`` while the first session is still opening."""
    runtime: SessionRuntimeAPI
    """The session shown now."""
    settings: Settings
    auto_allowed_in: weakref.WeakKeyDictionary[SessionRuntimeAPI, set[str]]
    """Per open session, what the user allowed without asking for the rest of it (set by DeepTuiApp)."""
    switcher: SessionSwitcher
    recent_sessions: list[SessionMetaLike] | None
    """The last session listing, so the picker shows at once (it refreshes itself after)."""
    _picker: SessionPickerScreen | None = None
    """Built on first use, then kept (see ``SessionPickerScreen.reopen``)."""

    @property
    def ready(self) -> bool:
        """False while the session is still opening (actions that need it say so)."""
        if self.factory is None or self.store is None:
            self.notify("The session is still opening…", severity="warning", timeout=3, markup=False)
            return False
        return True

    def refresh_title(self) -> None:
        """Show the current session (title, id, model) in the title bar, and what runs without asking."""
        granted = self.auto_allowed_in.get(self.runtime, set())
        tools = self.settings.tools
        kinds = tuple(kind for kind, always in (("writes", tools.writes == "always"),
                                                ("commands", tools.commands == "always"))
                      if always or kind in granted)
        self.query_one(TitleBar).show(self.runtime.info, kinds)

    def action_sessions(self) -> None:
        store, factory = self.store, self.factory
        if not self.ready or store is None or factory is None:
            return

        def chosen(result: PickerResult | None) -> None:
            if result is not None:
                self.switcher.handle_pick(result, self.factory)  # type: ignore[arg-type]  # the picker opens only when ready

        from tui.app.screens.session_picker import SessionPickerScreen

        current = self.runtime.info.session_id
        if self._picker is None or self._picker.store is not store:
            if self._picker is not None:
                self.uninstall_screen(self._picker)
            self._picker = SessionPickerScreen(store, current, initial=self.recent_sessions,
                                               rename_current=self._rename_current, search=factory.search)
            self.install_screen(self._picker, name=PICKER_SCREEN)
        else:
            self._picker.reopen(current, self.recent_sessions)
        self.push_screen(PICKER_SCREEN, chosen)

    async def reveal_message(self, index: int, saved_output: str | None = None, match: str | None = None) -> None:
        """Scroll the chat to message ``index`` of the current session (a search hit); a hit inside a saved
        output (whose chat block shows only a preview) also opens that output at the match, selected."""
        if await self.query_one(ChatView).reveal_message(index) is None:
            self.notify(f"message {index} is not in this session", severity="warning", markup=False)
            return
        if saved_output is not None:
            from tui.app.screens.evicted_viewer import EvictedViewerScreen

            self.push_screen(EvictedViewerScreen(Path(saved_output), search=match or ""))

    def _rename_current(self, title: str) -> None:
        self.runtime.rename(title)
        self.refresh_title()

    @work(thread=True, exclusive=True, group="list-sessions")
    def _list_sessions_ahead(self) -> None:
        """Keep a recent listing for the picker (session.json files only, off the UI thread)."""
        if self.store is not None:
            self.recent_sessions = list(self.store.list_sessions())

    def action_new_session(self) -> None:
        factory = self.factory
        if not self.ready or factory is None:
            return
        self.switcher.switch(factory.new_session, "new session")

    def action_fork_session(self) -> None:
        factory = self.factory
        if not self.ready or factory is None:
            return
        current = self.runtime.info.session_id
        self.switcher.switch(lambda: factory.fork_session(current), f"fork of {current}")

    def on_fork_at(self, message: ForkAt) -> None:
        """Fork at a chat message — after a confirmation that names the message."""
        factory = self.factory
        if not self.ready or factory is None:
            return
        from tui.app.screens.fork_confirm import fork_confirmation

        current, upto = self.runtime.info.session_id, message.upto

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.switcher.switch(lambda: factory.fork_session(current, upto),
                                     f"fork of {current} at message {upto}")
            else:
                self.query_one(PromptInput).focus()

        self.push_screen(fork_confirmation(self.runtime, upto), answered)
