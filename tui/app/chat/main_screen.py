"""The chat screen: the conversation, its prompt, its status row — and the behaviour that goes with them.

:class:`MainScreen` lays the chat out, shows the open session (its transcript, usage, cost and panels) and its
chain events, runs turns (each the one worker of the ``"turn"`` group), and carries out the chat's commands.
Its helpers get what they need from it through small protocols, never the App:
:class:`~tui.app.chat.prompt_flow.PromptFlow` (a submitted prompt: a command, sent, or queued),
:class:`~tui.app.chat.turn_runner.TurnRunner` (a turn's worker),
:class:`~tui.app.chat.session_actions.SessionActions` (the picker, new, fork, rename),
:class:`~tui.app.chat.model_switching.ModelSwitching` (``/model``),
:class:`~tui.app.chat.file_completion.FileCompletion` (``@`` files),
:class:`~tui.app.chat.chat_dialogs.ChatDialogs` (compact, context, MCP, the panels),
:class:`~tui.app.chat.rewinding.Rewinding` (``/rewind``, Esc Esc, the prompts' restore-point marks),
:class:`~tui.app.chat.chain_events.ChainEventRouter` (the session's chain events → the widgets),
:class:`~tui.app.chat.session_display.SessionDisplay` (the open session shown, at start and after a switch) and
:class:`~tui.app.chat.side_panels.SidePanels`. The widgets report up with their own nested messages. Its bases:
:class:`~tui.app.chat.chat_helpers.ChatHelpers` builds each helper on first use (all just after the first
frame), :class:`~tui.app.chat.host_screen.HostScreen` gives the general answers to their protocols (notices,
dialogs, workers, threads).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, OptionList
from textual.worker import Worker, WorkerState

from tui.app.chat.chat_helpers import ChatHelpers
from tui.app.chat.session_state import Approvers
from tui.app.chat.side_panels import SidePanels
from tui.app.double_escape import DoubleEscape
from tui.app.widgets.chat_footer import ChatFooter
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.cost_meter import CostMeter
from tui.app.widgets.gauge import ContextGauge
from tui.app.widgets.prompt_input import CommandSuggestions, PromptInput
from tui.app.widgets.status_row import StatusRow, compact_button
from tui.app.widgets.title_bar import TitleBar
from tui.app.worker_groups import TURN_GROUP

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import ComposeResult

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.app.chat.session_state import SessionState
    from tui.app.widgets.chat_blocks import ForkAt, ToolBlock
    from tui.app.widgets.prompt_queue import PromptQueue
    from tui.app.widgets.subagent_block import SubagentBlock
    from tui.app.widgets.todo_panel import TodoPanel
    from tui.chain.events import ChainEvent, UsageEvent
    from tui.store.session_tail import SessionTail

__all__ = ["Approvers", "MainScreen"]

logger = logging.getLogger(__name__)

INSTRUCTIONS_CHECK_SECONDS = 2.0
"""How often the screen looks whether the project's instruction files changed."""
CHROME_ROWS = 3
"""Rows never the chat's: the title bar, and the prompt's top border and first line (deep_tui.tcss)."""


class MainScreen(ChatHelpers):
    """The chat screen. Its keyboard starts in the prompt: with Textual's default (the first focusable
    widget, the chat) the focus would move from the chat to the prompt right after the first frame,
    restyling every block of a resumed session's tail on the way."""

    AUTO_FOCUS = "#prompt"
    CHAT_SCROLLS: ClassVar[dict[str, str]] = {"page_up": "scroll_page_up", "page_down": "scroll_page_down",
                                              "home": "scroll_home", "end": "scroll_end"}

    @dataclass
    class ChainEventArrived(Message):
        """A chain event of the open session, posted so widgets update on the UI's own schedule."""

        event: ChainEvent

    usage: reactive[UsageEvent | None] = reactive(None, always_update=True)
    """The session's latest context usage; the gauge is bound to it (``data_bind``)."""

    def __init__(self, state: SessionState, approvers: Approvers, *, tail: SessionTail | None = None,
                 id: str | None = None, on_turn_ended: Callable[[float, str], object] | None = None) -> None:
        """``state``: the open session (shared with the App, which opens the first one); ``approvers``: the
        dialogs every session shown here asks through; ``tail``: a resumed session's last messages, shown while
        it opens; ``on_turn_ended``: told when a turn or ``!command`` ends by itself (how long it took, how it
        ended), for the desktop notification."""
        super().__init__(id=id)
        self.state = state
        self.approvers = approvers
        self._on_turn_ended = on_turn_ended
        self._compacting = False
        """The turn worker running is ``/compact FOCUS``'s."""
        self._tail = tail
        self.panels = SidePanels(self, lambda: self.state.runtime)
        self._double_escape = DoubleEscape()
        """Esc Esc in an empty prompt opens the rewind dialog."""

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title-bar")
        with Horizontal(id="main"):
            with ChatView(id="chat"):
                if self._tail is not None and self._tail.records:
                    from tui.app.widgets.tail_blocks import tail_blocks

                    chat_rows = self.app.size.height - CHROME_ROWS  # at most: the chat's share of the terminal
                    yield from tail_blocks(self._tail, screen=(self.app.size.width, max(chat_rows, 1)))
            yield self.panels.slot()  # the panels are built just after the first frame
        # What the first frame does without: with the session still opening (how deep-tui starts) it is mounted
        # just after the first frame (HostScreen.mount_deferred); with the session open already, here.
        mount_now = not self.state.opening
        if mount_now:
            from tui.app.widgets.prompt_queue import PromptQueue
            from tui.app.widgets.provider_status import ProviderStatus
            from tui.app.widgets.task_line import TaskLine
            from tui.app.widgets.turn_activity import TurnActivity

            yield TurnActivity(id="turn-activity")
            yield ProviderStatus(id="provider-status")
            yield TaskLine(id="task-line")
        with StatusRow(id="status"):
            yield ContextGauge(id="gauge").data_bind(MainScreen.usage)
            yield CostMeter(id="cost")
            if mount_now:
                yield compact_button()
        if mount_now:
            yield PromptQueue(id="queue")
            yield CommandSuggestions(id="suggestions")
        yield PromptInput(id="prompt")
        yield ChatFooter(compact=True, keys_now=mount_now)

    FOOTER_PALETTE_MIN_WIDTH: ClassVar[int] = 90
    """Below this width the footer leaves out "^p palette" (Ctrl+P still opens it; F1 lists it), so the
    bindings before it are not cut off."""

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(ChatFooter).show_command_palette = event.size.width >= self.FOOTER_PALETTE_MIN_WIDTH

    async def on_mount(self) -> None:
        self.refresh_title()
        prompt = self.prompt
        prompt.recall_queued = lambda: self.prompts.recall_newest()
        prompt.complete_files = lambda typed: self.files.matches(typed)
        prompt.complete_models = lambda typed: self.models.completions(typed)
        prompt.focus()
        self.set_interval(INSTRUCTIONS_CHECK_SECONDS, self._check_instructions)
        if self.state.opening:  # the App opens the session after the first paint, then calls adopt_runtime
            self.chat.anchor()  # a resumed session's tail shows its last message
        else:
            await self._show_opened()

    def first_frame_shown(self) -> None:
        """The App's first frame is on the terminal: what waited for it (the side panels, the helpers) is
        built now."""
        if not self.is_attached:  # the app quit before its first frame was drawn: nothing to build
            return
        self.mount_deferred()
        self.query_one(ChatFooter).show_keys()
        self.panels.build_in_slot()
        self.build_helpers()

    # -- the widgets it owns ------------------------------------------------------------------

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    def focus_prompt(self) -> None:
        self.prompt.focus()

    # -- what its helpers ask of it (their protocols; the general answers are HostScreen's) ----------

    def show_usage(self, usage: UsageEvent | None) -> None:
        self.usage = usage

    async def scroll_to_message(self, index: int) -> bool:
        return await self.chat.reveal_message(index) is not None

    def turn_ended(self, seconds: float, summary: str) -> None:
        if self._on_turn_ended is not None:
            self._on_turn_ended(seconds, summary)

    def turn_recorded(self) -> None:
        self.sessions.list_sessions_ahead()
        self.refresh_title()
        self.mark_restore_points()

    def refresh_title(self) -> None:
        """Show the current session (title, id, model) in the title bar, what runs without asking, and its mode."""
        mode = "default" if self.state.opening else self.tasks.mode()  # (no task controls for the first frame)
        self.query_one(TitleBar).show(self.state.runtime.info, self.state.runs_without_asking(), mode)

    # -- turns ----------------------------------------------------------------------------------

    def run_turn(self, prompt: str) -> Worker[None]:
        """Send ``prompt`` and draw the turn as it streams (one turn at a time: the "turn" worker group)."""
        return self.run_worker(self.turns.turn(prompt), group=TURN_GROUP, exclusive=True)

    def run_user_command(self, command: str) -> Worker[None]:
        """``!command``: run in the sandbox, streamed into a block of its own (Esc kills it, like a turn)."""
        return self.run_worker(self.turns.user_command(command), group=TURN_GROUP, exclusive=True)

    @property
    def turn_running(self) -> bool:
        """A turn (or a ``!command``) is running: Esc has something to cancel."""
        return self.state.runtime.busy or any(w.group == TURN_GROUP and w.is_running for w in self.workers)

    def compact_now(self, focus: str) -> None:
        """``/compact FOCUS``: compact at once (a turn's worker: Esc cancels it, prompts typed meanwhile wait in the
        queue); while a turn runs, the compaction is asked for before its next model request."""
        if not self.ready:
            return
        if self.turn_running:
            self.state.runtime.request_compact(focus)
            self.tell(f"A turn is running: the compaction runs before its next model request, focused on: {focus}. "
                      "The log (Ctrl+L) shows the result.", timeout=6)
            return
        self._compacting = True
        self.run_worker(self.turns.compact(focus), group=TURN_GROUP, exclusive=True)

    async def cancel_turn(self) -> None:
        """Esc: stop the running turn (or ``/compact FOCUS``); what it produced so far stays recorded."""
        compacting = self._compacting
        if self.state.runtime.busy and self.workers.cancel_group(self, TURN_GROUP):
            await self.chat.add_notice("compaction cancelled — the history is unchanged" if compacting
                                       else "cancelled — what was produced so far is recorded")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The end of a turn sends the next queued prompt (kept apart from the turn itself)."""
        if event.worker.group != TURN_GROUP:
            return
        self.refresh_bindings()  # "esc cancel" shows only while a turn runs
        if event.state == WorkerState.ERROR:
            logger.error("the turn worker failed", exc_info=event.worker.error)
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._compacting = False
            for status in self.provider_statuses():  # a cancelled wait sends no "answering"
                status.clear()
            self.mark_restore_points()  # a cancelled turn or a !command may have one too
            self.prompts.turn_ended(cancelled=event.state == WorkerState.CANCELLED)
            self.tasks.turn_ended(finished=event.state == WorkerState.SUCCESS and self.turns.finished)

    def awaiting_provider(self) -> bool:
        """A turn or a compaction is running: something may be waiting for the provider."""
        return self.state.runtime.busy or any(worker.is_running and worker.group in (TURN_GROUP, "compact")
                                              for worker in self.workers)

    # -- what its widgets report -----------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.prompts.submitted(message)

    def on_todo_panel_keep_delete_requested(self, message: TodoPanel.KeepDeleteRequested) -> None:
        self.tasks.delete_keep(message.index)

    def on_prompt_queue_edit(self, message: PromptQueue.Edit) -> None:
        self.prompts.edit(message.text)

    @on(OptionList.OptionSelected, "#suggestions")
    def _suggestion_chosen(self, event: OptionList.OptionSelected) -> None:
        """A click on a completion: run that command, as Enter would."""
        event.stop()
        self.prompt.action_submit()

    @on(Button.Pressed, "#compact-button")
    def _compact_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dialogs.compact()

    def on_tool_block_open_saved(self, message: ToolBlock.OpenSaved) -> None:
        from tui.app.screens.evicted_viewer import EvictedViewerScreen

        self.app.push_screen(EvictedViewerScreen(message.path, source_path=message.source_path))

    def on_subagent_block_cancel_requested(self, message: SubagentBlock.CancelRequested) -> None:
        """Esc (or "cancel") on a subagent's block: stop that subagent only; the model reads that the user did."""
        message.stop()
        if not self.state.runtime.cancel_subagent(message.number):
            self.notify(f"subagent {message.number} is not running any more", timeout=3, markup=False)

    def on_fork_at(self, message: ForkAt) -> None:
        """Fork at a chat message — after a confirmation that names the message."""
        self.sessions.fork_at(message.upto)

    def on_key(self, event: events.Key) -> None:
        """Letters typed while a chat message (or the compact button) is selected go to the prompt; Esc Esc in an
        empty prompt (no turn running) opens the rewind dialog."""
        if event.key == "escape":
            if not self.turn_running and self.focused is self.prompt \
                    and self._double_escape.press(prompt_empty=not self.prompt.text.strip()):
                event.stop()
                self.rewinds.open()
            return
        self._double_escape.reset()
        if self.prompts.take_typing(event, self.focused):
            event.prevent_default()
            event.stop()

    def action_scroll_chat(self, how: str) -> None:
        """PageUp/PageDown (and Home/End in an empty prompt) scroll the chat from the prompt."""
        method = self.CHAT_SCROLLS.get(how)
        if method is not None:
            getattr(self.chat, method)(animate=False)

    # -- the open session ------------------------------------------------------------------------

    async def _show_opened(self) -> None:
        await self.display_session.show_opened()

    async def adopt_runtime(self, runtime: SessionRuntimeAPI) -> None:
        """Show ``runtime`` (already open); the caller closes the previous one. In one frame: the old page
        removed and the new one built are not painted on the way."""
        with self.app.batch_update():
            await self.display_session.adopt(runtime)

    def send_queued(self) -> None:
        """Typed while the session was opening: send it now."""
        self.prompts.send_next()

    async def show_current_session(self) -> None:
        await self.display_session.show_current()

    def mark_restore_points(self) -> None:
        """Mark each prompt in the chat that has a restore point."""
        self.rewinds.mark_prompts()

    def dismiss_welcome(self) -> None:
        """The first prompt: the welcome has done its job."""
        self.display_session.dismiss_welcome()

    def show_warnings(self) -> None:
        self.display_session.show_warnings()

    def _check_instructions(self) -> None:
        """An edited AGENTS.md / CLAUDE.md is counted again at once (a few stats; a read only after a change)."""
        if self.state.runtime.refresh_instructions():
            self.notify("The project instructions (AGENTS.md / CLAUDE.md) changed; the next request uses them.",
                        timeout=4, markup=False)

    # -- chain events (may arrive from a worker) ------------------------------------------

    def post_chain_event(self, event: ChainEvent) -> None:
        self.post_message(self.ChainEventArrived(event))

    async def on_main_screen_chain_event_arrived(self, message: ChainEventArrived) -> None:
        await self.chain_events.arrived(message.event)

    # -- the chat's own commands (the App's registry actions call these; the dialogs are ChatDialogs') -----

    def export(self, target: str = "") -> None:
        """``/export [FILE]``: written in a thread; the path (or why not) is shown when done."""
        if not self.ready:  # (which says so)
            return
        from tui.app.chat.export_action import start_export

        start_export(self, self.state.runtime, target)

    def toggle_panel(self, tab: str) -> None:
        """Ctrl+T (and the others through :class:`ChatDialogs`): the Todos panel is filled as it opens."""
        if tab == "todos-tab":
            self.tasks.show()
        self.dialogs.toggle_panel(tab)


if TYPE_CHECKING:

    def _answers_its_helpers(screen: MainScreen) -> tuple[object, ...]:
        """For mypy only: the chat screen answers each helper's protocol (:class:`ChatHelpers` builds them
        from the screen typed loosely)."""
        from tui.app.chat.chain_events import ChainEventRouter
        from tui.app.chat.chat_dialogs import ChatDialogs
        from tui.app.chat.file_completion import FileCompletion
        from tui.app.chat.model_switching import ModelSwitching
        from tui.app.chat.prompt_flow import PromptFlow
        from tui.app.chat.rewinding import Rewinding
        from tui.app.chat.session_actions import SessionActions
        from tui.app.chat.session_display import SessionDisplay
        from tui.app.chat.task_controls import TaskControls
        from tui.app.chat.turn_runner import TurnRunner

        return (PromptFlow(screen), TurnRunner(screen), SessionActions(screen), ModelSwitching(screen),
                FileCompletion(screen), TaskControls(screen, lambda: screen.state.runtime), ChatDialogs(screen),
                Rewinding(screen), ChainEventRouter(screen),
                SessionDisplay(screen, screen.approvers, screen.post_chain_event))
