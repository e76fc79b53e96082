"""deep-tui's Textual application: one screen — chat, gauge, prompt, side panels, footer.

:class:`DeepTuiApp` lays the screen out, opens the first session after the first frame, shows a session
(its transcript, usage, cost and panels) and its chain events, and carries out the dialog and panel
commands. Its base classes hold the rest: :class:`~tui.app.turn_actions.TurnActions` (running and
cancelling turns) and :class:`~tui.app.session_actions.SessionActions` (the picker, new, fork, rename).
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import weakref
from importlib.resources import files
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.driver import Driver
from textual.logging import TextualHandler
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Button, Footer

from tui.agent.mcp.status import McpNotice
from tui.agent.models.cost_events import CostUpdated
from tui.agent.models.provider_events import ProviderEvent
from tui.agent.runtime_api import RuntimeFactoryAPI, SessionRuntimeAPI
from tui.app.approval_dialogs import CommandDialogApprover, DialogApprover
from tui.app.clipboard import copy_text
from tui.app.command_registry import bindings
from tui.app.file_completion import FileCompletion
from tui.app.index_notes import IndexNotes
from tui.app.model_actions import ModelActions
from tui.app.opening import OpeningSession, SessionOpener
from tui.app.palette import DeepTuiCommands
from tui.app.prompt_flow import PromptFlow
from tui.app.session_actions import SessionActions
from tui.app.session_events import ChainEventArrived, SessionSwitcher, SwitchHooks
from tui.app.side_panels import SidePanels
from tui.app.stop_signals import StopSignals
from tui.app.terminal_driver import TerminalDriver, terminal_driver_for
from tui.app.turn_actions import TurnActions
from tui.app.widgets.blocks import ToolBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.cost_meter import CostMeter
from tui.app.widgets.gauge import ContextGauge
from tui.app.widgets.prompt_input import CommandSuggestions, PromptInput
from tui.app.widgets.prompt_queue import PromptQueue
from tui.app.widgets.provider_status import ProviderStatus
from tui.app.widgets.status_row import StatusRow
from tui.app.widgets.title_bar import TitleBar
from tui.app.widgets.turn_activity import TurnActivity
from tui.base.config import Settings
from tui.base.log_setup import RedactingFormatter
from tui.base.redaction import redact
from tui.chain.events import CompactionFailed, CompactionFinished, EvictedEvent, UsageEvent
from tui.text.terminal_text import visible

INSTRUCTIONS_CHECK_SECONDS = 2.0
"""How often the app looks whether the project's instruction files changed."""
CHROME_ROWS = 3
"""Rows never the chat's: the title bar, and the prompt's top border and first line (deep_tui.tcss)."""

logger = logging.getLogger(__name__)

if TYPE_CHECKING:

    from tui.app.screens.session_rows import SessionStoreLike
    from tui.store.session_tail import SessionTail
    from tui.trust.project import TrustChoice, TrustDecider

# The dialogs (compact, context, help, evicted viewer) are imported when first opened:
# none is needed for the first frame, and together they are a good part of the start-up time.


def stylesheets() -> list[str | PurePath]:
    """The .tcss files shipped in the ``tui.styles`` package (works from a wheel)."""
    root = files("tui.styles")
    return [PurePath(str(root / name)) for name in ("deep_tui.tcss", "panels.tcss")]


class MainScreen(Screen[None]):
    """The chat screen. Its keyboard starts in the prompt: with Textual's default (the first focusable
    widget, the chat) the focus would move from the chat to the prompt right after the first frame,
    restyling every block of a resumed session's tail on the way."""

    AUTO_FOCUS = "#prompt"


class DeepTuiApp(TurnActions, SessionActions):
    """The full-screen app for one session at a time (switchable)."""

    TITLE = "deep-tui"
    CSS_PATH: ClassVar = stylesheets()
    COMMANDS = App.COMMANDS | {DeepTuiCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_turn", "cancel", show=True, key_display="esc"),
        # Before every widget's own Ctrl+C (copy): the action copies a selection itself (see TurnActions).
        Binding("ctrl+c", "interrupt", show=False, priority=True),
        *bindings(),
    ]
    usage: reactive[UsageEvent | None] = reactive(None, always_update=True)
    """The session's latest context usage; the gauge is bound to it (``data_bind``)."""

    def get_driver_class(self) -> type[Driver]:
        return terminal_driver_for(super().get_driver_class())  # one that survives its terminal closing

    @on(TerminalDriver.TerminalGone)
    def _terminal_gone(self) -> None:
        self.stop_signals.terminal_gone()

    def get_default_screen(self) -> Screen[None]:
        return MainScreen(id="_default")

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
        self.stop_signals = StopSignals(self)
        self._tail = tail
        self.factory = factory
        self.runtime = runtime
        self.store = store
        self.settings = settings
        self.theme = settings.theme
        self.switcher = SessionSwitcher(SwitchHooks(
            current=lambda: self.runtime, adopt=self.adopt_runtime, reveal=self.reveal_message, notify=self.notify,
            start=lambda work, group: self.run_worker(work, group=group, exclusive=True)))
        self._opener = opener
        self._trust = trust
        self.recent_sessions = None
        self.startup_error: str | None = None
        """Why the session could not be opened (printed on stderr after the app exits)."""
        self.served = False
        """Running in a browser tab (``deep-tui serve``): a start-up error is shown in the page before the app
        ends, since nobody reads its stderr."""
        self._unsubscribe = runtime.subscribe(self._forward_event)
        self.auto_allowed_in: weakref.WeakKeyDictionary[SessionRuntimeAPI, set[str]] = weakref.WeakKeyDictionary()
        """Per open session, what the user let run without asking for the rest of it ("writes", "commands")."""
        self.write_approver = DialogApprover(self, on_allowed_for_session=lambda: self._auto_allowed("writes"))
        runtime.set_write_approver(self.write_approver)  # file writes ask first (as [tools] writes says)
        self.command_approver = CommandDialogApprover(
            self, on_allowed_for_session=lambda: self._auto_allowed("commands"))
        runtime.set_command_approver(self.command_approver)  # so do shell commands ([tools] commands)
        self.prompts = PromptFlow(self)
        self.models = ModelActions(self)
        self.files = FileCompletion(self)
        self.panels = SidePanels(self, lambda: self.runtime)
        self._log_handler = TextualHandler(stderr=False, stdout=False)
        self._log_handler.setFormatter(RedactingFormatter())  # `textual console` shows no key either
        self._welcome_done = False
        """The first prompt was sent: the welcome does not come back in this run."""

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

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52 (the terminal), and the system clipboard tool as a fallback; says what was copied."""
        copy_text(self, text, f"{len(text):,} characters")

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title-bar")
        with Horizontal(id="main"):
            with ChatView(id="chat"):
                if self._tail is not None and self._tail.records:
                    from tui.app.widgets.tail_blocks import tail_blocks

                    chat_rows = self.size.height - CHROME_ROWS  # at most: the chat's share of the terminal
                    yield from tail_blocks(self._tail, screen=(self.size.width, max(chat_rows, 1)))
            yield self.panels.slot()  # the panels are built just after the first frame
        yield TurnActivity(id="turn-activity")  # a line of its own while a turn runs
        yield ProviderStatus(id="provider-status")  # a line of its own while the provider keeps us waiting
        with StatusRow(id="status"):
            yield ContextGauge(id="gauge").data_bind(DeepTuiApp.usage)
            yield CostMeter(id="cost")
            yield Button("Compact ^g", id="compact-button", compact=True)
        yield PromptQueue(id="queue")
        yield CommandSuggestions(id="suggestions")
        yield PromptInput(id="prompt")
        yield Footer(compact=True)

    FOOTER_PALETTE_MIN_WIDTH: ClassVar[int] = 90
    """Below this width the footer leaves out "^p palette" (Ctrl+P still opens it; F1 lists it), so the
    bindings before it are not cut off."""

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(Footer).show_command_palette = event.size.width >= self.FOOTER_PALETTE_MIN_WIDTH

    async def on_mount(self) -> None:
        # Records go to the log file (configured at launch) and to `textual console`; with a handler on
        # the root logger, Python no longer prints unhandled warnings on the terminal under the app.
        logging.getLogger().addHandler(self._log_handler)
        self.stop_signals.install()  # SIGTERM/SIGHUP record the running turn before the app ends
        self.refresh_title()
        prompt = self.query_one(PromptInput)
        prompt.recall_queued = self.prompts.recall_newest
        prompt.complete_files = self.files.matches
        prompt.complete_models = self.models.completions
        prompt.focus()
        self.set_interval(INSTRUCTIONS_CHECK_SECONDS, self._check_instructions)
        if self._opener is not None:  # after the first paint, so the screen is never held up by the import
            self.query_one(ChatView).anchor()  # a resumed session's tail shows its last message
            if self._trust is not None:
                self.call_after_refresh(self._ask_trust, self._trust)
            else:
                self.call_after_refresh(self._open_in_background, self._opener)
            return
        self.usage = self._initial_usage()
        self.query_one(CostMeter).show_session(self.runtime.session_cost)
        self.prompts.use_session(self.runtime)
        await self.show_current_session()
        self._show_warnings()
        self._list_sessions_ahead()
        self.factory.search.start_refresh(on_indexing=IndexNotes(self))  # type: ignore[union-attr]  # in the background
        self._start_mcp()

    def _check_instructions(self) -> None:
        """An edited AGENTS.md / CLAUDE.md is counted again at once (a few stats; a read only after a change)."""
        if self.runtime.refresh_instructions():
            self.notify("The project instructions (AGENTS.md / CLAUDE.md) changed; the next request uses them.",
                        timeout=4, markup=False)

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

    def _show_warnings(self) -> None:
        for warning in self.runtime.info.warnings:
            logger.warning("session %s: %s", self.runtime.info.session_id, warning)
            self.notify(warning, severity="warning", timeout=10, markup=False)
        self._check_sandbox()

    @work(thread=True, exclusive=True, group="sandbox-check")
    def _check_sandbox(self) -> None:
        """Say at once when shell commands cannot run sandboxed (the probe runs a process: off the UI thread)."""
        notice = self.runtime.sandbox_notice()
        if notice:
            logger.warning("%s", notice)
            self.call_from_thread(self.notify, notice, severity="warning", timeout=10, markup=False)

    def _ask_trust(self, trust: TrustDecider) -> None:
        """The project trust prompt; the session opens once it is answered, with the settings it gives."""
        from tui.app.screens.project_trust import ProjectTrustScreen
        from tui.trust.project import TrustChoice

        def decided(choice: TrustChoice | None) -> None:
            self._trust_decided(trust, choice or TrustChoice.NOT_NOW)

        self.push_screen(ProjectTrustScreen(trust.pending), decided)

    def _trust_decided(self, trust: TrustDecider, choice: TrustChoice) -> None:
        from tui.base.errors import UserFacingError

        try:
            settings, warning = trust.decide(choice)
        except UserFacingError as error:  # the project config does not fit the user's (thresholds across files)
            self.startup_error = str(error)
            self.exit(None, error.exit_code)
            return
        if warning:
            self.notify(warning, severity="warning", timeout=10, markup=False)
        self.settings = settings
        if settings.theme != self.theme:
            from textual.app import InvalidThemeError

            try:
                self.theme = settings.theme
            except InvalidThemeError:  # keep the theme in use
                self.notify(f"unknown theme {settings.theme!r} in the project config", severity="warning",
                            markup=False)
        assert self._opener is not None
        self._open_in_background(self._opener)

    @work(thread=True, exclusive=True, group="open")
    def _open_in_background(self, opener: SessionOpener) -> None:
        from tui.base.errors import UserFacingError

        try:
            factory, runtime = opener()
            import tui.app.widgets.answer_block  # noqa: F401  Markdown, off the UI thread, before the first answer
        except UserFacingError as error:  # printed on stderr after the app ends (not logged: nothing is created)
            self.startup_error = str(error)
            if self.served:
                self.call_from_thread(self._show_startup_error, str(error), error.exit_code)
            else:
                self.call_from_thread(self.exit, None, error.exit_code)
            return
        # mypy cannot solve call_from_thread's type variable for an async callback returning None.
        self.call_from_thread(self._adopt_first, factory, runtime)  # type: ignore[arg-type]

    def _auto_allowed(self, kind: str) -> None:
        self.auto_allowed_in.setdefault(self.runtime, set()).add(kind)
        self.refresh_title()  # the title bar says "writes auto-allowed" (or commands) from now on

    def _awaiting_provider(self) -> bool:
        """A turn or a compaction is running: something may be waiting for the provider."""
        return self.runtime.busy or any(worker.is_running and worker.group in ("turn", "compact")
                                        for worker in self.workers)

    def _show_startup_error(self, message: str, exit_code: int) -> None:
        """In a browser tab: say why the session cannot be opened, then end this tab's deep-tui."""
        from tui.app.screens.confirm import TextViewerModal

        self.push_screen(TextViewerModal("deep-tui cannot open this session", message),
                         callback=lambda _: self.exit(None, exit_code))

    async def _adopt_first(self, factory: RuntimeFactoryAPI, runtime: SessionRuntimeAPI) -> None:
        self.factory = factory
        self.store = factory.store  # type: ignore[attr-defined]
        with self.batch_update():  # the tail shown while opening becomes the real transcript in one frame
            await self.adopt_runtime(runtime)
        self._show_warnings()
        factory.search.start_refresh(on_indexing=IndexNotes(self))  # index what changed since the last run, in the background
        self._start_mcp()
        # Off while the app starts (tui.cli). What start-up built (modules, widgets, the session) lives on:
        # frozen, later full collections do not rescan it, so they stay short while an answer streams.
        gc.freeze()
        gc.enable()
        self.prompts.send_next()  # typed while the session was opening: send it now

    def _initial_usage(self) -> UsageEvent | None:
        if self.runtime.last_usage is not None:
            return self.runtime.last_usage
        usage = [event for event in self.runtime.past_events() if isinstance(event, UsageEvent)]
        return usage[-1] if usage else None

    async def show_current_session(self) -> None:
        past = self.runtime.past_events()
        finished = [e for e in past if isinstance(e, CompactionFinished)]
        failed = [e for e in past if isinstance(e, CompactionFailed)]
        chat = self.query_one(ChatView)
        await chat.show_session(self.runtime, finished, failed)
        if not self._welcome_done and self.runtime.info.session_id and self.runtime.history_count() == 0 \
                and not len(self.query_one(PromptQueue)):
            from tui.app.widgets.welcome import WelcomeBlock

            await chat.mount(WelcomeBlock.for_session(self.runtime, self.settings))

    def dismiss_welcome(self) -> None:
        """The first prompt: the welcome has done its job."""
        self._welcome_done = True
        for welcome in self.query("#welcome"):
            welcome.remove()

    # -- chain events (may arrive from a worker) ------------------------------------------

    def _forward_event(self, event: object) -> None:
        self.post_message(ChainEventArrived(event))  # type: ignore[arg-type]

    async def on_chain_event_arrived(self, message: ChainEventArrived) -> None:
        event = message.event
        if isinstance(event, UsageEvent):
            self.usage = event
            return
        if isinstance(event, CostUpdated):
            self.query_one(CostMeter).add(event)
            return
        if isinstance(event, ProviderEvent):
            for status in self.query(ProviderStatus):
                if self._awaiting_provider():
                    status.show(event)
                else:  # a late word from a request that is over: the line says nothing untrue
                    status.clear()
            return
        self.panels.add_event(event)
        if isinstance(event, EvictedEvent):
            self.panels.refresh_evicted(self.runtime)
        if isinstance(event, CompactionFinished) and event.strategy in ("summary", "fallback"):
            await self.query_one(ChatView).add_divider(event)
        elif isinstance(event, CompactionFailed):
            await self.query_one(ChatView).add_failed_compaction(event)

    # -- dialogs and panels (the registry's other actions) --------------------------------------------------

    @on(Button.Pressed, "#compact-button")
    def _compact_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_compact()

    def action_compact(self, focus: str = "") -> None:
        def done(result: object) -> None:
            self.query_one(PromptInput).focus()

        from tui.app.screens.compact_dialog import CompactDialog

        self.push_screen(CompactDialog(self.runtime, focus=focus, autostart=bool(focus)), done)

    def action_context(self) -> None:
        if not self.ready:
            return
        from tui.app.screens.context_report import ContextScreen

        report = self.runtime.context_breakdown()
        if self.usage is not None:  # one figure with the gauge: the gauge's own
            report = dataclasses.replace(report, counted=self.usage.tokens)
        self.push_screen(ContextScreen(report, offline=self.runtime.info.offline))

    def action_model(self, name: str = "") -> None:
        """``/model NAME`` switches the model; ``/model`` opens the chooser."""
        self.models.open(name)

    def action_help(self) -> None:
        from tui.app.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_mcp(self) -> None:
        from tui.app.screens.mcp_servers import McpServersScreen

        if self.factory is None:
            self.notify("The session is still opening…", severity="warning", timeout=3, markup=False)
            return
        mcp = self.factory.mcp
        if mcp is None:
            self.push_screen(McpServersScreen(list))
            return
        self.push_screen(McpServersScreen(mcp.views, mcp.on_change))

    def action_memory(self) -> None:
        self.panels.toggle("memory-tab")

    def action_log(self) -> None:
        self.panels.toggle("log-tab")

    def action_evicted(self) -> None:
        self.panels.refresh_evicted(self.runtime)
        self.panels.toggle("evicted-tab")

    def on_tool_block_open_saved(self, message: ToolBlock.OpenSaved) -> None:
        from tui.app.screens.evicted_viewer import EvictedViewerScreen

        self.push_screen(EvictedViewerScreen(message.path, source_path=message.source_path))

    # -- session switching hooks (used by SessionSwitcher) ---------------------------------

    async def adopt_runtime(self, runtime: SessionRuntimeAPI) -> None:
        """Show ``runtime`` (already open); the caller closes the previous one."""
        logger.info("session %s open (model %s)", runtime.info.session_id, runtime.info.model_name)
        self._unsubscribe()
        self.runtime = runtime
        self._unsubscribe = runtime.subscribe(self._forward_event)
        runtime.set_write_approver(self.write_approver)
        runtime.set_command_approver(self.command_approver)
        self.refresh_title()
        self.prompts.use_session(runtime)
        self.usage = self._initial_usage()
        self.query_one(CostMeter).show_session(runtime.session_cost)
        self.query_one(ProviderStatus).clear()  # whatever the last session was waiting for is over
        await self.panels.adopt(runtime)
        await self.show_current_session()
        self._list_sessions_ahead()
        if self.screen is self.screen_stack[0]:
            self.query_one(PromptInput).focus()  # after any switch (fork, new, open) keys go to the prompt
