"""Opening the first session: the project trust prompt, then the session opened in a thread after the first frame.

:class:`FirstSessionOpening` is the App's start-up for an app built with an opener
(:meth:`~tui.app.app.DeepTuiApp.opening`). It gets what it needs as values and callables, never the App class:
the Textual app it runs on (its workers, screens, theme and exit), the shared :class:`SessionState`, the chat
screen that shows the session, and the App's callbacks for a start-up error and for a session that is open.
"""

from __future__ import annotations

import gc
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import App

    from tui.agent.runtime_api import RuntimeFactoryAPI, SessionRuntimeAPI
    from tui.app.chat.main_screen import MainScreen
    from tui.app.chat.session_state import SessionState
    from tui.app.opening import SessionOpener
    from tui.trust.project import TrustChoice, TrustDecider

OPEN_GROUP = "open"
"""The worker group the first session opens in."""


class FirstSessionOpening:
    """Asks the trust question (when there is one), opens the session in the background and shows it."""

    def __init__(self, app: App[Any], session: SessionState, chat: MainScreen, opener: SessionOpener, *,
                 trust: TrustDecider | None, served: Callable[[], bool], failed: Callable[[str], None],
                 opened: Callable[[], None]) -> None:
        """``served``: the app runs in a browser tab (a start-up error is shown in the page); ``failed``: keeps
        why the session could not be opened (printed on stderr after the app ends); ``opened``: starts what the
        open session's factory runs in the background."""
        self._app = app
        self._session = session
        self._chat = chat
        self._opener = opener
        self._trust = trust
        self._served = served
        self._failed = failed
        self._opened = opened

    def start(self) -> None:
        """After the first paint, so the screen is never held up by the import: the trust prompt, or the session."""
        if self._trust is not None:
            self._app.call_after_refresh(self._ask_trust, self._trust)
        else:
            self._app.call_after_refresh(self._open_in_background)

    def _ask_trust(self, trust: TrustDecider) -> None:
        """The project trust prompt; the session opens once it is answered, with the settings it gives."""
        from tui.app.screens.project_trust import ProjectTrustScreen
        from tui.trust.project import TrustChoice

        def decided(choice: TrustChoice | None) -> None:
            self._trust_decided(trust, choice or TrustChoice.NOT_NOW)

        from tui.app.dialog_approvers import typed_into_prompt

        screen = ProjectTrustScreen(trust.pending)
        screen.typed_early = lambda key: typed_into_prompt(self._app, key)
        self._app.push_screen(screen, decided)

    def _trust_decided(self, trust: TrustDecider, choice: TrustChoice) -> None:
        from tui.base.errors import UserFacingError

        app = self._app
        try:
            settings, warning = trust.decide(choice)
        except UserFacingError as error:  # the project config does not fit the user's (thresholds across files)
            self._failed(str(error))
            app.exit(None, error.exit_code)
            return
        if warning:
            app.notify(warning, severity="warning", timeout=10, markup=False)
        self._session.settings = settings
        if settings.theme != app.theme:
            from textual.app import InvalidThemeError

            try:
                app.theme = settings.theme
            except InvalidThemeError:  # keep the theme in use
                app.notify(f"unknown theme {settings.theme!r} in the project config", severity="warning",
                           markup=False)
        self._open_in_background()

    def _open_in_background(self) -> None:
        self._app.run_worker(partial(self._open, self._opener), name="_open_in_background", group=OPEN_GROUP,
                             description="open the first session", exclusive=True, thread=True)

    def _open(self, opener: SessionOpener) -> None:
        """In the worker's thread: open the session, then hand it (or why not) to the UI thread."""
        from tui.base.errors import UserFacingError

        app = self._app
        try:
            factory, runtime = opener()
            import tui.app.widgets.answer_block  # noqa: F401  Markdown, off the UI thread, before the first answer
        except UserFacingError as error:  # printed on stderr after the app ends (not logged: nothing is created)
            self._failed(str(error))
            if self._served():
                app.call_from_thread(self._show_startup_error, str(error), error.exit_code)
            else:
                app.call_from_thread(self._end_for_startup_error, error.exit_code)  # type: ignore[arg-type]
            return
        # mypy cannot solve call_from_thread's type variable for an async callback returning None.
        app.call_from_thread(self._adopt_first, factory, runtime)  # type: ignore[arg-type]

    async def _end_for_startup_error(self, exit_code: int) -> None:
        await self._chat.panels.settled()  # not under the side panels' mount
        self._app.exit(None, exit_code)

    def _show_startup_error(self, message: str, exit_code: int) -> None:
        """In a browser tab: say why the session cannot be opened, then end this tab's deep-tui."""
        from tui.app.screens.basic_dialogs import TextViewerModal

        self._app.push_screen(TextViewerModal("deep-tui cannot open this session", message),
                              callback=lambda _: self._app.exit(None, exit_code))

    async def _adopt_first(self, factory: RuntimeFactoryAPI, runtime: SessionRuntimeAPI) -> None:
        self._session.factory = factory
        self._session.store = factory.store  # type: ignore[attr-defined]
        with self._app.batch_update():  # the tail shown while opening becomes the real transcript in one frame
            await self._chat.adopt_runtime(runtime)
        self._chat.show_warnings()
        self._opened()  # index what changed since the last run; the MCP servers
        # Off while the app starts (tui.cli). What start-up built (modules, widgets, the session) lives on:
        # frozen, later full collections do not rescan it, so they stay short while an answer streams.
        gc.freeze()
        gc.enable()
        self._chat.send_queued()  # typed while the session was opening: send it now
