"""A running turn's view: events are taken at network speed, the screen catches up at frame rate.

The turn's worker hands every :data:`~tui.agent.turn_events.TurnEvent` to :meth:`LiveTurn.push`,
which only queues it, so the agent (recording, token accounting) never waits for the screen. A
timer draws what is queued at most ``FRAME_SECONDS`` apart: all text that arrived since the last
frame is appended in one go, tool blocks are mounted in order. A frame that takes longer than the
interval delays the next one (ticks are skipped, not queued), so a slow screen coalesces more per
frame instead of holding the stream back. And the screen's share of the time is bounded: a frame that
cost *d* seconds to draw and paint, while the app had no idle time (a stream at thousands of tokens
per second), is followed by at least ``d × (1 / MAX_DRAW_SHARE − 1)`` without one (capped at
``SLOWEST_FRAME_SECONDS``): a costly screen draws less often rather than taking the CPU from the stream
it shows. With idle time to spare, frames come at the full rate.

"No idle time" counts the time the app's thread waited for a CPU as well as the time it ran
(:func:`runnable_seconds`): on a loaded machine the app gets a fraction of a CPU, and that fraction must go
to the stream, not to frames; measured by CPU time alone, a starved app looks idle and draws at full rate.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import TYPE_CHECKING

from tui.agent.turn_events import (
    PromptAttached,
    SubagentActivity,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    ToolOutputEnded,
    TurnEvent,
    TurnFailed,
)
from tui.text.attachment_text import attached_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic_ai.messages import ModelMessage

    from tui.app.widgets.answer_block import AssistantBlock
    from tui.app.widgets.chat_view import ChatView
    from tui.app.widgets.thinking_block import ThinkingBlock

__all__ = ["FRAME_SECONDS", "LiveTurn", "runnable_seconds"]

FRAME_SECONDS = 1 / 15
MAX_DRAW_SHARE = 0.05
"""While the CPU is busy, at most this share of the time goes to drawing frames."""
BUSY_SHARE = 0.8
"""The app is busy when its thread was runnable (running, or waiting for a CPU) at least this share of the wall
time between two frames."""
SLOWEST_FRAME_SECONDS = 0.6
"""However costly frames are, one is drawn at least this often."""

_SCHEDSTAT = "/proc/thread-self/schedstat"


def runnable_seconds() -> float:
    """Seconds the calling thread has run or waited in the run queue for a CPU (Linux's schedstat: both
    fields are nanoseconds); where that is not available, the process's CPU time."""
    try:
        with open(_SCHEDSTAT, "rb") as stats:
            running, waiting = stats.read().split()[:2]
        return (int(running) + int(waiting)) / 1e9
    except (OSError, ValueError):
        return time.process_time()


class LiveTurn:
    """Queues a turn's events and draws them on the chat at frame rate."""

    def __init__(self, chat: ChatView) -> None:
        self.chat = chat
        self._queue: deque[TurnEvent] = deque()
        self._answer: AssistantBlock | None = None
        self._thinking: ThinkingBlock | None = None
        self.answers: list[AssistantBlock] = []
        """Every answer block this turn drew, in order (each gets its message index once recorded)."""
        self._lock = asyncio.Lock()
        self._shown = chat.shown_session
        """The chat's session when the turn started: after a switch, this turn draws nothing more."""
        self._timer = chat.set_interval(FRAME_SECONDS, self._frame, name="live-turn")
        self._quiet_until = 0.0
        """No frame before this (``time.monotonic()``): the pause the last frame's cost asks for."""
        self._last_painted = (time.monotonic(), runnable_seconds())
        self._unpainted = False
        """A frame is drawn but its paint (:meth:`_painted`) has not come yet: no next frame before it, so its
        cost is known before the next starts."""
        self._urgent = False
        """A tool's end is queued: drawn as soon as no frame is in the way (no pause, no wait for the tick)."""

    @property
    def behind(self) -> bool:
        """Something received is not on screen yet."""
        return bool(self._queue) or (self._answer is not None and self._answer.behind)

    def push(self, event: TurnEvent) -> None:
        """Take an event now (O(1)); it is drawn by the next frame. A tool's end is drawn at once, whatever pause
        the frames before asked for: the pause spares a busy stream, and the burst of output before the end is
        over (a command's last lines and exit status are what the user waits for)."""
        self._queue.append(event)
        if isinstance(event, (ToolOutputEnded, ToolCallFinished)):
            self._urgent = True
            self.chat.call_later(self._frame)

    def index_answers(self, recorded: Sequence[ModelMessage], turn_start: int) -> None:
        """Give every answer block of the turn its message index once the turn is recorded (``recorded`` is
        the history from ``turn_start`` on), text closed by a tool call included, so Ctrl+F forks at any of
        them. Matched from the newest back: one block per response with text."""
        from pydantic_ai.messages import ModelResponse, TextPart  # loaded by now: a turn just ran

        with_text = [turn_start + offset for offset, message in enumerate(recorded)
                     if isinstance(message, ModelResponse)
                     and any(isinstance(part, TextPart) and part.content for part in message.parts)]
        for block, index in zip(reversed(self.answers), reversed(with_text), strict=False):
            block.message_index = index

    async def close(self) -> None:
        """The turn ended: draw everything still queued and finish the answer."""
        async with self._lock:  # not while a frame draws: stopping the timer would cancel that frame
            self._timer.stop()
            await self._show_last_words()
            await self._draw()
            await self._close_answer()
            if self.chat.shown_session == self._shown:
                self.chat.unfold()  # between turns the whole chat is laid out (clicks, scrolling to any block)

    async def _show_last_words(self) -> None:
        """The answer's last words, still queued, go on screen as plain text before the blocks they close are
        parsed (a long code block's Markdown and highlighting take a while), and the screen is refreshed."""
        answer, queue = self._answer, self._queue
        if answer is None or self.chat.shown_session != self._shown or not self.chat.is_attached:
            return
        while queue and isinstance(first := queue[0], TextDelta):  # what follows them is drawn after, by _draw
            queue.popleft()
            answer.feed(first.text)
        if answer.preview_pending():
            for _ in range(2):  # the tail's new height is laid out, then the anchored chat scrolls to it
                refreshed = asyncio.Event()
                self.chat.call_after_refresh(refreshed.set)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(refreshed.wait(), SLOWEST_FRAME_SECONDS)

    async def _frame(self) -> None:
        if self._lock.locked() or self._unpainted or not self.behind:
            return
        if time.monotonic() < self._quiet_until and not self._urgent:
            return
        async with self._lock:
            self._urgent = False
            started = (time.monotonic(), runnable_seconds())
            with self.chat.app.batch_update():  # one layout and paint for the whole frame, not one per step
                await self._draw()
                if self._answer is not None:  # segments it mounted are parsed after mounting: part of this frame
                    await self._answer.settled(SLOWEST_FRAME_SECONDS)
            self._unpainted = True
            if self.chat.call_after_refresh(self._painted, started) is False:  # the chat is closing: no paint
                self._unpainted = False

    def _painted(self, started: tuple[float, float]) -> None:
        """The frame begun at ``started`` (wall, runnable) is on screen. If the app had no idle time between the
        frame before and this one (a stream keeping it busy, on a free CPU or a loaded one), what this one cost
        (drawing, layout, paint) sets the pause before the next."""
        self._unpainted = False
        now = time.monotonic()
        gap_wall, gap_runnable = started[0] - self._last_painted[0], started[1] - self._last_painted[1]
        busy = gap_runnable / gap_wall if gap_wall > 0 else 0.0
        self._last_painted = (now, runnable_seconds())
        if busy < BUSY_SHARE:
            self._quiet_until = 0.0
        else:
            self._quiet_until = now + min(SLOWEST_FRAME_SECONDS, (now - started[0]) * (1 / MAX_DRAW_SHARE - 1))
        if self._urgent:  # a tool's end came while this frame was drawn or painted: the next one now
            self.chat.call_later(self._frame)

    async def _draw(self) -> None:
        chat = self.chat
        if chat.shown_session != self._shown or not chat.is_attached:
            self._queue.clear()
            self._answer = None
            return
        while self._queue:
            event = self._queue.popleft()
            if isinstance(event, ThinkingDelta):
                if self._thinking is None:
                    await self._close_answer()
                    self._thinking = await chat.start_thinking()
                self._thinking.add(event.text)
                continue
            self._thinking = None  # thinking ends where the answer or a tool call begins
            if isinstance(event, TextDelta):
                if self._answer is None:
                    self._answer = await chat.start_answer()
                    self.answers.append(self._answer)
                self._answer.feed(event.text)
            elif isinstance(event, ToolCallStarted):
                await self._close_answer()
                await chat.add_tool_call(event)
            elif isinstance(event, ToolOutputDelta):
                pieces = [event.text]  # everything the command printed since the last frame: one append
                while self._queue and isinstance(self._queue[0], ToolOutputDelta) \
                        and self._queue[0].call_id == event.call_id:
                    pieces.append(self._queue.popleft().text)  # type: ignore[union-attr]
                chat.tool_output(event.call_id, pieces)
            elif isinstance(event, ToolOutputEnded):
                chat.tool_output_ended(event.call_id, event.status)
            elif isinstance(event, ToolCallFinished):
                chat.finish_tool_call(event)
            elif isinstance(event, SubagentActivity):
                chat.subagent_activity(event)
            elif isinstance(event, PromptAttached):
                await chat.add_notice(attached_line(list(event.lines), event.refused))  # as a reopened prompt shows it
            elif isinstance(event, TurnFailed):
                await self._close_answer()
                await chat.add_notice(f"turn failed: {event.message}", "error")
        chat.fold_far_blocks()
        if self._answer is not None:
            await self._answer.render_pending()

    async def _close_answer(self) -> None:
        if self._answer is not None:
            await self._answer.finish()
            self._answer = None
