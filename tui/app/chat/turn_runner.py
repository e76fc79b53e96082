"""The chat's turns: a prompt becomes a streamed turn in the chat; ``!command`` streams into a block of its own.

:class:`TurnRunner` holds the bodies of the two kinds of turn; the chat screen
(:class:`~tui.app.chat.main_screen.MainScreen`) runs each as the one worker of its ``"turn"`` group, so Esc
(and a stop signal) cancels whichever runs. What happens to a submitted prompt (a command, sent, or queued) is
:class:`~tui.app.chat.prompt_flow.PromptFlow`'s.
"""

from __future__ import annotations

import logging
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Protocol

from tui.agent.turn_events import TurnFailed, TurnFinished
from tui.app.formatting import human_duration
from tui.app.widgets.live_turn import FRAME_SECONDS, LiveTurn
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from tui.app.chat.session_state import SessionState
    from tui.app.widgets.chat_view import ChatView
    from tui.app.widgets.turn_activity import TurnActivity

__all__ = ["TurnHost", "TurnRunner"]

logger = logging.getLogger(__name__)

class TurnHost(Protocol):
    """What a turn needs from the screen that owns the chat."""

    state: SessionState

    @property
    def chat(self) -> ChatView: ...

    @property
    def activity(self) -> TurnActivity: ...

    def turn_recorded(self) -> None:
        """A turn finished and is recorded: the title and the picker's listing follow."""

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None:
        """A notification (plain text)."""

    def turn_ended(self, seconds: float, summary: str) -> None:
        """A turn or ``!command`` ended by itself after ``seconds`` (not cancelled by the user): ``summary`` says
        how, for a desktop notification when it took long (hostile text: the notifier makes it safe)."""


class TurnRunner:
    """Runs a turn, or the user's ``!command``, and draws it as it streams."""

    def __init__(self, host: TurnHost) -> None:
        self.host = host
        self.finished = False
        """The last turn ended with an answer (not cancelled, not failed)."""

    async def turn(self, prompt: str) -> None:
        """Send ``prompt`` and draw the turn as it streams."""
        chat, runtime = self.host.chat, self.host.state.runtime
        turn_start = runtime.history_count()
        await chat.add_user(prompt, message_index=turn_start)
        live = LiveTurn(chat)  # takes the turn's events and draws them at frame rate
        activity = self.host.activity
        activity.start()
        finished = self.finished = False
        started = time.monotonic()
        ending = ""
        try:
            async with aclosing(runtime.run_turn(prompt)) as events:  # closed here if drawing fails
                async for event in events:
                    live.push(event)  # drawn at the next frame: the agent never waits for the screen
                    activity.count(event)
                    if isinstance(event, TurnFinished):
                        finished = self.finished = True
                        ending = _first_line(event.output) or "(no text)"
                        self.host.turn_recorded()
                    elif isinstance(event, TurnFailed) and not event.cancelled:
                        ending = event.message
        finally:
            activity.stop()
            await live.close()
        seconds = time.monotonic() - started
        if finished:
            self.host.turn_ended(seconds, f"answer ready after {human_duration(seconds)}: {ending}")
            live.index_answers(runtime.load_history(turn_start, runtime.history_count()), turn_start)
        elif ending:
            self.host.turn_ended(seconds, f"the turn failed after {human_duration(seconds)}: {_first_line(ending)}")

    async def compact(self, focus: str) -> None:
        """``/compact FOCUS``: compact now, with the activity line running (Esc cancels: the history stays as it
        was). The chat shows the result as for any compaction (a divider, or the failure); a notification gives
        the figures."""
        from tui.app.screens.compact_dialog import describe_result
        from tui.chain.events import CompactionFailed

        activity = self.host.activity
        activity.start(f"compacting (focus: {visible(focus)})")
        try:
            result = await self.host.state.runtime.compact(focus)
        finally:
            activity.stop()
        failed = isinstance(result, CompactionFailed)
        self.host.tell(describe_result(result).plain, severity="warning" if failed else "information", timeout=8)

    async def user_command(self, command: str) -> None:
        """``!command``: run it in the sandbox as the user, its output streamed into a block at frame rate; the
        model reads it with the next prompt (Esc kills it, like a turn)."""
        chat, runtime = self.host.chat, self.host.state.runtime
        await chat.add_user(f"!{command}")
        block = await chat.add_user_command(command)
        arrived: list[str] = []

        async def on_output(text: str) -> None:
            arrived.append(text)

        def draw() -> None:
            if arrived:
                block.stream_output(arrived[:])
                arrived.clear()

        timer = chat.set_interval(FRAME_SECONDS, draw, name="user-command")
        started = time.monotonic()
        try:
            result = await runtime.run_user_command(command, on_output)
        finally:
            timer.stop()
            draw()
        seconds = time.monotonic() - started
        self.host.turn_ended(seconds, f"!{_first_line(command)} ended after {human_duration(seconds)}: {result.status}")
        size = block.output_view.chars if block.output_view is not None else 0
        block.set_result(result.status, size, evicted_path=None, is_error=not result.ran)
        if not result.ran:
            self.host.tell(result.status, severity="warning")


def _first_line(text: str) -> str:
    """The first line that holds something."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
