"""The app's turns: a submitted prompt becomes a streamed turn in the chat; Esc cancels it.

:class:`TurnActions` is a base class of :class:`~tui.app.app.DeepTuiApp`; what happens to a submitted
prompt (a command, sent, or queued) is :class:`~tui.app.prompt_flow.PromptFlow`'s.
"""

from __future__ import annotations

import logging
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.widgets import Input, OptionList, TextArea
from textual.worker import Worker, WorkerState

from tui.agent.turn_events import TurnFinished
from tui.app.session_actions import SessionActions
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.prompt_queue import PromptQueue
from tui.app.widgets.provider_status import ProviderStatus
from tui.app.widgets.turn_activity import TurnActivity

if TYPE_CHECKING:
    from tui.app.prompt_flow import PromptFlow

__all__ = ["TurnActions"]

logger = logging.getLogger(__name__)


class TurnActions(SessionActions):
    """Running a turn and drawing its events, cancelling it, and the prompt's keys on the app.

    Built on :class:`SessionActions`: a finished turn refreshes the title and the picker's listing."""

    prompts: PromptFlow
    """The prompt's side of the app (set by DeepTuiApp)."""
    CHAT_SCROLLS: ClassVar[dict[str, str]] = {"page_up": "scroll_page_up", "page_down": "scroll_page_down",
                                              "home": "scroll_home", "end": "scroll_end"}

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.prompts.submitted(message)

    def on_prompt_queue_edit(self, message: PromptQueue.Edit) -> None:
        self.prompts.edit(message.text)

    @on(OptionList.OptionSelected, "#suggestions")
    def _suggestion_chosen(self, event: OptionList.OptionSelected) -> None:
        """A click on a completion: run that command, as Enter would."""
        event.stop()
        self.query_one(PromptInput).action_submit()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The end of a turn sends the next queued prompt (kept apart from ``run_turn``)."""
        if event.worker.group != "turn":
            return
        self.refresh_bindings()  # "esc cancel" shows only while a turn runs
        if event.state == WorkerState.ERROR:
            logger.error("the turn worker failed", exc_info=event.worker.error)
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            for status in self.query(ProviderStatus):  # a cancelled wait sends no "answering"
                status.clear()
            self.prompts.turn_ended(cancelled=event.state == WorkerState.CANCELLED)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc (cancel) is offered only while a turn runs."""
        if action == "cancel_turn":
            return self.runtime.busy or any(w.group == "turn" and w.is_running for w in self.workers)
        return True

    def on_key(self, event: events.Key) -> None:
        """Letters typed while a chat message (or the compact button) is selected go to the prompt."""
        if self.screen is self.screen_stack[0] and self.prompts.take_typing(event, self.focused):
            event.prevent_default()
            event.stop()

    def action_scroll_chat(self, how: str) -> None:
        """PageUp/PageDown (and Home/End in an empty prompt) scroll the chat from the prompt."""
        method = self.CHAT_SCROLLS.get(how)
        if method is not None:
            getattr(self.query_one(ChatView), method)(animate=False)

    @work(exclusive=True, group="turn")
    async def run_turn(self, prompt: str) -> None:
        """Send ``prompt`` and draw the turn as it streams (one turn at a time: the "turn" worker group)."""
        chat = self.query_one(ChatView)
        turn_start = self.runtime.history_count()
        await chat.add_user(prompt, message_index=turn_start)
        live = chat.start_turn()
        activity = self.query_one(TurnActivity)
        activity.start()
        finished = False
        try:
            async with aclosing(self.runtime.run_turn(prompt)) as events:  # closed here if drawing fails
                async for event in events:
                    live.push(event)  # drawn at the next frame: the agent never waits for the screen
                    activity.count(event)
                    if isinstance(event, TurnFinished):
                        finished = True
                        self._list_sessions_ahead()
                        self.refresh_title()
        finally:
            activity.stop()
            await live.close()
        if finished:
            live.index_answers(self.runtime.load_history(turn_start, self.runtime.history_count()), turn_start)

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
        if self.runtime.busy or any(w.group == "turn" and w.is_running for w in self.workers):
            await self.action_cancel_turn()
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

    @work(exclusive=True, group="turn")
    async def run_user_command(self, command: str) -> None:
        """``!command``: run it in the sandbox as the user, its output streamed into a block at frame rate; the
        model reads it with the next prompt (Esc kills it, like a turn)."""
        from tui.app.widgets.live_turn import FRAME_SECONDS

        chat = self.query_one(ChatView)
        await chat.add_user(f"!{command}")
        block = await chat.add_user_command(command)
        arrived: list[str] = []

        async def on_output(text: str) -> None:
            arrived.append(text)

        def draw() -> None:
            if arrived:
                block.stream_output(arrived[:])
                arrived.clear()

        timer = self.set_interval(FRAME_SECONDS, draw, name="user-command")
        try:
            result = await self.runtime.run_user_command(command, on_output)
        finally:
            timer.stop()
            draw()
        size = block.output_view.chars if block.output_view is not None else 0
        block.set_result(result.status, size, evicted_path=None, is_error=not result.ran)
        if not result.ran:
            self.notify(result.status, severity="warning", markup=False)

    async def action_cancel_turn(self) -> None:
        """Esc: stop the running turn; what it produced so far stays recorded."""
        if self.runtime.busy and self.workers.cancel_group(self, "turn"):
            await self.query_one(ChatView).add_notice("cancelled — what was produced so far is recorded")
