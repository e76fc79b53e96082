"""deep-tui's Textual application: start-up, the screens, the global keys and the command registry.

:class:`DeepTuiApp` is thin. It opens the first session (in the background after the first frame, after the
project trust prompt when there is one), starts what the session's factory runs in the background (the
search index, the MCP servers), owns the dialogs that ask before a write or a command, the terminal driver
and the stop signals, and maps every registry command (:mod:`tui.app.command_registry`) to an action.
The chat itself — its layout, turns, prompt, queue, status row and session switching — is the
:class:`~tui.app.chat.main_screen.MainScreen`'s.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, ClassVar

from textual import messages, on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.logging import TextualHandler
from textual.widgets import Input, TextArea

from tui.app.chat.main_screen import MainScreen
from tui.app.chat.session_state import Approvers, SessionState
from tui.app.clipboard import copy_text
from tui.app.command_palette import DeepTuiCommands
from tui.app.command_registry import bindings, find, use_custom_commands
from tui.app.desktop_notice import DesktopNotifier
from tui.app.dialog_approvers import CommandDialogApprover, SummaryConsentAsker, WriteDialogApprover
from tui.app.index_notes import IndexNotes
from tui.app.opening import OpeningSession, SessionOpener
from tui.app.session_opening import FirstSessionOpening
from tui.app.stable_stylesheet import StableStylesheet
from tui.app.stop_signals import StopSignals
from tui.app.terminal_driver import TerminalDriver, terminal_driver_for
from tui.app.widgets.prompt_input import PromptInput
from tui.base.log_setup import RedactingFormatter
from tui.base.redaction import redact
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

CHAT_SCREEN = "chat"
"""The name the chat screen is installed under."""

if TYPE_CHECKING:

    from textual.driver import Driver
    from textual.notifications import SeverityLevel

    from tui.agent.mcp.status import McpNotice
    from tui.agent.runtime_api import RuntimeFactoryAPI, SessionRuntimeAPI
    from tui.app.screens.session_rows import SessionMetaLike, SessionStoreLike
    from tui.base.config import Settings
    from tui.chain.events import UsageEvent
    from tui.store.session_tail import SessionTail
    from tui.trust.project import TrustDecider

# The dialogs (compact, context, help, evicted viewer) are imported when first opened:
# none is needed for the first frame, and together they are a good part of the start-up time.


def stylesheets() -> list[str | PurePath]:
    """The .tcss files shipped in the ``tui.styles`` package (beside its ``__init__.py``, in a wheel as in the
    source tree; found through the module, not ``importlib.resources``, whose import costs the first frame)."""
    from importlib.util import find_spec

    spec = find_spec("tui.styles")
    if spec is None or spec.origin is None:
        raise RuntimeError("deep-tui is installed without its stylesheets (the tui.styles package)")
    root = Path(spec.origin).parent
    return [root / name for name in ("deep_tui.tcss", "panels.tcss")]


class DeepTuiApp(App[int]):
    """The full-screen app for one session at a time (switchable, on its :class:`MainScreen`)."""

    TITLE = "deep-tui"
    MODES: ClassVar = {"_default": CHAT_SCREEN}
    """The chat screen is the default mode's: Textual mounts it (its layout, and the session it shows) before
    the App's own mount, as it mounts an App's composed widgets."""
    CSS_PATH: ClassVar = stylesheets()
    COMMANDS = App.COMMANDS | {DeepTuiCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_turn", "cancel", show=True, key_display="esc"),
        # Before every widget's own Ctrl+C (copy): the action copies a selection itself (see action_interrupt).
        Binding("ctrl+c", "interrupt", show=False, priority=True),
        *bindings(),
    ]

    def get_driver_class(self) -> type[Driver]:
        return terminal_driver_for(super().get_driver_class())  # one that survives its terminal closing

    @on(TerminalDriver.TerminalGone)
    def _terminal_gone(self) -> None:
        self.stop_signals.terminal_gone()

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast (the app's and each screen's) with control characters made visible and known secrets
        redacted: messages quote file names, errors (a provider may echo the key) and titles, hostile text."""
        super().notify(visible(redact(message)), title=visible(redact(title)), severity=severity, timeout=timeout,
                       markup=markup)

    def __init__(self, *, factory: RuntimeFactoryAPI | None, runtime: SessionRuntimeAPI, store: SessionStoreLike | None,
                 settings: Settings, opener: SessionOpener | None = None, tail: SessionTail | None = None,
                 trust: TrustDecider | None = None) -> None:
        """With ``opener``, ``runtime`` is an :class:`OpeningSession` and the real session is opened in a
        thread after the first frame; an error from it ends the app with exit status 2 and its message.
        ``tail``: the session's last messages, read from its raw JSON, shown until it is open.
        ``trust``: a project config waiting for the user's decision: asked first, the session opens after."""
        super().__init__()
        self.stylesheet = StableStylesheet.replacing(self.stylesheet)  # each CSS source parsed once at start
        self.stop_signals = StopSignals(self)
        self.session = SessionState(runtime=runtime, settings=settings, factory=factory, store=store)
        """The open session, shared with the chat screen (a session switch changes it in place)."""
        if settings.theme != self.theme:
            self.theme = settings.theme
            self.stylesheet.set_variables(self.get_css_variables())  # the theme's, before the first parse
        self.startup_error: str | None = None
        """Why the session could not be opened (printed on stderr after the app exits)."""
        self.served = False
        """Running in a browser tab (``deep-tui serve``): a start-up error is shown in the page before the app
        ends, since nobody reads its stderr."""
        self.desktop = DesktopNotifier(settings=lambda: self.session.settings.ui, focused=lambda: self.app_focus,
                                       write=self._write_to_terminal)
        """Desktop notifications (``[ui] notify``): a long turn ended, an approval waits."""
        approvers = Approvers(
            writes=WriteDialogApprover(self, on_allowed_for_session=self._auto_allowed,
                                       on_asking=self.desktop.approval_waiting),
            commands=CommandDialogApprover(self, on_allowed_for_session=lambda: self._auto_allowed("commands"),
                                           on_asking=self.desktop.approval_waiting),
            summary=SummaryConsentAsker(self, on_asking=self.desktop.approval_waiting))
        self.main_screen = MainScreen(self.session, approvers, tail=tail, id="_default",
                                      on_turn_ended=self.desktop.turn_ended)
        """The chat: the screen under every dialog."""
        self.install_screen(self.main_screen, name=CHAT_SCREEN)
        self._opening = None if opener is None else FirstSessionOpening(
            self, self.session, self.main_screen, opener, trust=trust, served=lambda: self.served,
            failed=self._startup_failed, opened=self._start_background)
        """Start-up with an opener: the trust prompt, then the first session opened in the background."""
        self._log_handler = TextualHandler(stderr=False, stdout=False)
        self._log_handler.setFormatter(RedactingFormatter())  # `textual console` shows no key either

    @classmethod
    def opening(cls, *, settings: Settings, memory_path: Path, data_root: Path, opener: SessionOpener,
                tail: SessionTail | None = None, trust: TrustDecider | None = None,
                served: bool = False) -> DeepTuiApp:
        """An app that paints at once and opens its session in the background; with ``tail`` (a resumed
        session's last messages, see :mod:`tui.store.session_tail`) its first frame shows them; with
        ``trust``, the project trust prompt comes first and its answer decides the session's settings."""
        runtime = OpeningSession(memory_path, data_root, title=tail.title if tail is not None else None)
        app = cls(factory=None, runtime=runtime, store=None, settings=settings, opener=opener, tail=tail,
                  trust=trust)
        app.served = served
        return app

    # -- the open session (the chat screen's, shared) ---------------------------------------------

    @property
    def runtime(self) -> SessionRuntimeAPI:
        """The session shown now."""
        return self.session.runtime

    @property
    def factory(self) -> RuntimeFactoryAPI | None:
        """Opens sessions; ``None`` while the first session is still opening."""
        return self.session.factory

    @property
    def store(self) -> SessionStoreLike | None:
        """The sessions on disk; ``None`` while the first session is still opening."""
        return self.session.store

    @property
    def settings(self) -> Settings:
        return self.session.settings

    @property
    def recent_sessions(self) -> list[SessionMetaLike] | None:
        """The last session listing, kept ahead for the picker."""
        return self.session.recent_sessions

    @property
    def usage(self) -> UsageEvent | None:
        """The session's latest context usage, as the gauge shows it."""
        return self.main_screen.usage

    @usage.setter
    def usage(self, usage: UsageEvent | None) -> None:
        self.main_screen.usage = usage

    def watch_app_focus(self, focused: bool) -> None:
        """The terminal reported a focus change (FocusIn/FocusOut): logged with ``--debug``, to tell why a desktop
        notification came or not."""
        logger.debug("the terminal %s the focus", "has" if focused else "lost")

    def _write_to_terminal(self, text: str) -> None:
        """Raw text to the terminal, between frames (as Textual writes OSC 52 and the bell)."""
        if self._driver is not None:
            self._driver.write(text)

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52 (the terminal), and the system clipboard tool as a fallback; says what was copied."""
        copy_text(self, text, f"{len(text):,} characters")

    # -- start-up ---------------------------------------------------------------------------------

    def on_mount(self) -> None:
        # Records go to the log file (configured at launch) and to `textual console`; with a handler on
        # the root logger, Python no longer prints unhandled warnings on the terminal under the app.
        logging.getLogger().addHandler(self._log_handler)
        # Textual lays the chat screen (MODES) out and paints it inside its start-up batch, which shows nothing;
        # the first frame after the batch then repaints only what changed since, without the prompt and the
        # gauge (they came one refresh, ~20 ms, later). Ask for the whole screen with the first frame.
        self.screen.refresh()
        self.screen.post_message(messages.Update(self.screen))
        self.stop_signals.install()  # SIGTERM/SIGHUP record the running turn before the app ends
        if self._opening is not None:  # the trust prompt, then the session, after the first paint
            self._opening.start()
            return
        self._start_background()

    def on_ready(self) -> None:
        # Textual shows nothing until the App is running (after its mount), and posts Ready after the first
        # layout; what waits for the first frame goes after the refresh that shows it.
        self.call_after_refresh(self.main_screen.first_frame_shown)

    def _startup_failed(self, message: str) -> None:
        self.startup_error = message

    def _start_background(self) -> None:
        """What the open session's factory brings: its custom commands in the registry; in the background, the
        search index's refresh and the MCP servers."""
        if self.factory is not None:
            self._use_extensions(self.factory)
            self.factory.search.start_refresh(on_indexing=IndexNotes(self))
        self._start_mcp()

    async def on_unmount(self) -> None:
        logging.getLogger().removeHandler(self._log_handler)
        self.stop_signals.uninstall()
        mcp = self.factory.mcp if self.factory is not None else None
        if mcp is not None:
            await mcp.aclose()  # their processes end with the app

    def _start_mcp(self) -> None:
        """The MCP servers start in the background (the first frame is already drawn); a server that fails
        or stops is one notification."""
        mcp = self.factory.mcp if self.factory is not None else None
        if mcp is None:
            return

        def notify(notice: McpNotice) -> None:
            self.notify(notice.message, severity=notice.severity, timeout=10, markup=False)

        mcp.listen(notify)
        mcp.start()

    def _auto_allowed(self, kind: str) -> None:
        self.session.allow_for_session(kind)
        self.main_screen.refresh_title()  # the title bar says "writes auto-allowed" (or commands) from now on

    # -- the global keys: the registry's commands, carried out by the chat screen ------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc (cancel) is offered only while a turn runs."""
        if action == "cancel_turn":
            return self.main_screen.turn_running
        if action == "cycle_mode":  # Shift+Tab moves the focus back in a dialog
            return self.screen is self.main_screen
        return True

    async def action_quit(self) -> None:
        """Ctrl+Q (Ctrl+D in an empty prompt): quit — after asking, when the MEMORY.md editor holds unsaved edits."""
        from tui.app.screens.basic_dialogs import QuitQuestion
        from tui.app.widgets.memory_editor import MemoryEditor

        asked = any(isinstance(screen, QuitQuestion) for screen in self.screen_stack)
        if asked or not any(editor.dirty for editor in self.main_screen.query(MemoryEditor)):
            self.exit()  # nothing unsaved, or a second Ctrl+Q while asked
            return

        def answered(quit_anyway: bool | None) -> None:
            if quit_anyway:
                self.exit()

        self.push_screen(QuitQuestion("MEMORY.md has edits you have not saved (Ctrl+S in the editor)."), answered)

    async def action_cancel_turn(self) -> None:
        """Esc: stop the running turn; what it produced so far stays recorded."""
        await self.main_screen.cancel_turn()

    def action_compact(self, focus: str = "") -> None:
        self.main_screen.dialogs.compact(focus)

    def action_context(self) -> None:
        self.main_screen.dialogs.context()

    def action_model(self, name: str = "") -> None:
        """``/model NAME`` switches the model; ``/model`` opens the chooser."""
        self.main_screen.models.open(name)

    def _use_extensions(self, factory: RuntimeFactoryAPI) -> None:
        """Offer the custom slash commands the factory read; say what was skipped (a clash, a bad file)."""
        extensions = factory.extensions
        skipped = use_custom_commands(list(extensions.commands.commands.values()))
        for line in [*extensions.warnings, *skipped]:
            logger.warning("%s", line)
            self.notify(line, title="Skills and commands", severity="warning", timeout=10, markup=False)

    def action_custom_command(self, name: str, arguments: str = "") -> None:
        """A custom command chosen in the palette: its prompt is sent (``$ARGUMENTS`` empty)."""
        command = find(name)
        if command is not None and command.custom is not None:
            self.main_screen.prompts.send(command.custom.expand(arguments))

    def action_skills(self) -> None:
        self.main_screen.dialogs.skills()

    def action_help(self) -> None:
        from tui.app.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_mcp(self) -> None:
        self.main_screen.dialogs.mcp()

    def action_rewind(self) -> None:
        self.main_screen.rewinds.open()

    def action_export(self, target: str = "") -> None:
        """``/export [FILE]``: the session to a file; the path is shown."""
        self.main_screen.export(target)

    def action_agents(self) -> None:
        self.main_screen.dialogs.agents()

    def action_memory(self) -> None:
        self.main_screen.dialogs.toggle_panel("memory-tab")

    def action_log(self) -> None:
        self.main_screen.dialogs.toggle_panel("log-tab")

    def action_evicted(self) -> None:
        self.main_screen.dialogs.toggle_panel("evicted-tab")

    def action_todos(self) -> None:
        self.main_screen.toggle_panel("todos-tab")

    def action_keep(self, text: str = "") -> None:
        """``/keep TEXT`` adds a standing instruction; ``/keep`` lists them with delete."""
        self.main_screen.tasks.keep(text)

    def action_cycle_mode(self) -> None:
        """Shift+Tab: default → auto-accept writes → plan."""
        self.main_screen.tasks.cycle_mode()

    def action_sessions(self) -> None:
        self.main_screen.sessions.open_picker()

    def action_new_session(self) -> None:
        self.main_screen.sessions.new_session()

    def action_fork_session(self) -> None:
        self.main_screen.sessions.fork_session()

    QUIT_PRESS_SECONDS: ClassVar[float] = 2.0
    """A second Ctrl+C within this many seconds of the first (with nothing to cancel or copy) quits."""
    _last_idle_interrupt: float = 0.0

    async def action_interrupt(self) -> None:
        """Ctrl+C as terminal users expect: copy a selection if there is one; else cancel the running turn; else
        clear the typed prompt (as a shell does); else say how to quit, and quit on a second press."""
        focused = self.focused
        if isinstance(focused, (TextArea, Input)) and focused.selected_text:
            focused.action_copy()
            return
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            return
        from tui.app.screens.approval_dialog import ApprovalDialog

        asking = isinstance(self.screen, ApprovalDialog)  # quits on the second press, as promised (the call: denied)
        if not asking and self.main_screen.turn_running:
            await self.main_screen.cancel_turn()
            return
        prompts = self.screen.query(PromptInput)
        if prompts and prompts.first().clear_typed():
            self.notify("Prompt cleared (↑ brings it back)", timeout=self.QUIT_PRESS_SECONDS)
            return
        now = time.monotonic()
        if now - self._last_idle_interrupt <= self.QUIT_PRESS_SECONDS:
            self.exit()
            return
        self._last_idle_interrupt = now
        self.notify("Press Ctrl+C again to quit (or Ctrl+Q; Ctrl+D in an empty prompt)", timeout=self.QUIT_PRESS_SECONDS)
