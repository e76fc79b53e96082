"""A subagent in the chat: one block for a ``task`` call.

Collapsed, it shows the subagent's description and what it is doing now — the tool in use, its own context on its
own window with a small gauge, its requests and cost — and, once it ended, how (its answer's first line, or why it
stopped). Enter or the "transcript" button opens its transcript: its own history (``subagents/<n>/messages.json``)
drawn with the chat's own blocks (:mod:`tui.app.widgets.tail_blocks`, straight from the raw JSON, read in a thread).
Esc on the block, or its "cancel" button, asks for the subagent to be stopped (:class:`SubagentBlock.CancelRequested`:
the screen cancels it, and the parent's model reads that the user did).

Every string shown came from the model or a file: it is terminal-safe (:func:`tui.text.terminal_text.visible`) and
never markup.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

from tui.app.formatting import human_tokens
from tui.store.session_tail import SessionTail, read_tail_records
from tui.text.cost_text import format_usd
from tui.text.terminal_text import visible
from tui.text.wording import plural

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from tui.agent.turn_events import SubagentActivity

GAUGE_CELLS = 10
TRANSCRIPT_RECORDS = 200
"""The newest messages of a subagent's history its transcript shows."""
WARN_SHARE, CRITICAL_SHARE = 0.85, 0.90
STATE_WORDS = {"starting": "starting", "running": "running", "finished": "done", "failed": "failed",
               "cancelled": "cancelled"}


def mini_gauge(tokens: int, window: int, cells: int = GAUGE_CELLS) -> Content:
    """``▰▰▰▱▱▱▱▱▱▱ 31% 12.4k/40k``: the subagent's own context on its own window."""
    if window <= 0:
        return Content.styled("▱" * cells + " –", "$text-muted")
    share = min(1.0, tokens / window)
    filled = round(share * cells)
    colour = "$error" if share >= CRITICAL_SHARE else "$warning" if share >= WARN_SHARE else "$success"
    return Content.assemble(("▰" * filled, colour), ("▱" * (cells - filled), "$text-muted"),
                            (f" {share * 100:.0f}%", f"bold {colour}"),
                            f" {human_tokens(tokens)}/{human_tokens(window)}")


def one_line(text: str, limit: int = 120) -> str:
    """``text`` on one terminal-safe line, cut at ``limit`` characters."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


class SubagentBlock(Vertical, can_focus=True):
    """A ``task`` call's subagent: description, live activity, transcript on demand; Esc asks to cancel it."""

    DEFAULT_CSS = """
    SubagentBlock {
        height: auto;
        margin: 0 0 0 2;
        padding: 0 1;
        border-left: outer $accent 50%;
    }
    SubagentBlock:focus { border-left: outer $accent; background: $boost; }
    SubagentBlock.-failed { border-left: outer $error; }
    SubagentBlock.-cancelled { border-left: outer $warning; }
    SubagentBlock .subagent-title { height: auto; }
    SubagentBlock .subagent-activity { height: auto; color: $text-muted; }
    SubagentBlock .subagent-controls { height: auto; }
    SubagentBlock .subagent-controls Button { margin: 0 1 0 0; }
    SubagentBlock .subagent-transcript { height: auto; display: none; }
    SubagentBlock.-open .subagent-transcript { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_subagent", "cancel subagent", show=False),
        Binding("enter", "toggle_transcript", "transcript", show=False),
    ]

    @dataclass
    class CancelRequested(Message):
        """The user asked to stop subagent ``number`` (its block's Esc or "cancel" button)."""

        number: int

    def __init__(self, call_id: str, description: str = "") -> None:
        super().__init__(classes="subagent-block")
        self.call_id = call_id
        self.activity: SubagentActivity | None = None
        self._description = one_line(description) if description else "starting a subagent"
        self._title = Static(self._title_content(), classes="subagent-title")
        self._line = Static(Content.styled("waiting for a slot…", "$text-muted"), classes="subagent-activity")
        self._transcript_button = Button("transcript", compact=True, classes="subagent-transcript-button")
        self._cancel_button = Button("cancel", compact=True, variant="warning", classes="subagent-cancel")
        self._transcript = Vertical(classes="subagent-transcript")
        self._loaded_from: int | None = None
        """How many records the shown transcript held (it is read again when the subagent has moved on)."""
        self.result_preview = ""

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._line
        with Horizontal(classes="subagent-controls"):
            yield self._transcript_button
            yield self._cancel_button
        yield self._transcript

    @property
    def number(self) -> int | None:
        return self.activity.number if self.activity is not None else None

    @property
    def running(self) -> bool:
        return self.activity is None or self.activity.running

    @property
    def open(self) -> bool:
        return self.has_class("-open")

    def _title_content(self) -> Content:
        activity = self.activity
        head = "⤷ subagent" if activity is None else f"⤷ subagent {activity.number} · {one_line(activity.name, 40)}"
        return Content.assemble((head, "bold $accent"), ("  ", ""), self._description)

    def update_activity(self, activity: SubagentActivity) -> None:
        """Show the subagent's news (called by the live turn for each :class:`SubagentActivity` of this call)."""
        self.activity = activity
        self._description = one_line(activity.description) or self._description
        self._title.update(self._title_content())
        self._line.update(self._activity_content(activity))
        for state in ("finished", "failed", "cancelled"):
            self.set_class(activity.state == state, f"-{state}")
        self._cancel_button.display = activity.running
        if self.open and not activity.running:
            self._load_transcript()

    def _activity_content(self, activity: SubagentActivity) -> Content:
        state = STATE_WORDS.get(activity.state, one_line(activity.state, 20))
        doing = f"{state} {one_line(activity.tool, 40)}" if activity.running and activity.tool else state
        cost = "price unknown" if activity.cost_usd is None else format_usd(activity.cost_usd)
        parts: list[Content | str | tuple[str, str]] = [
            (doing, "bold" if activity.running else ""), "  ", mini_gauge(activity.tokens, activity.window),
            f"  {plural(activity.requests, 'request')} · {cost}"]
        if not activity.running and activity.answer:
            tone = "$error" if activity.state == "failed" else "$warning" if activity.state == "cancelled" else ""
            parts += ["\n", (one_line(activity.answer.strip().split("\n", 1)[0], 200), tone)]
        return Content.assemble(*parts)

    def set_result(self, preview: str) -> None:
        """The ``task`` call's result reached the parent (its answer, or the error the parent read)."""
        self.result_preview = visible(preview)
        if self.activity is None:  # no news came (refused before it started: an unknown type, an empty prompt)
            self._line.update(Content.styled(one_line(preview, 200), "$error"))
            self._cancel_button.display = False
            self.add_class("-failed")

    # -- the user's controls ----------------------------------------------------------------

    def action_cancel_subagent(self) -> None:
        if self.activity is not None and self.activity.running:
            self.post_message(self.CancelRequested(self.activity.number))
            self._line.update(Content.styled("cancelling…", "$warning"))

    def action_toggle_transcript(self) -> None:
        self.set_class(not self.open, "-open")
        self._transcript_button.label = "hide transcript" if self.open else "transcript"
        if self.open:
            self._load_transcript()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button is self._cancel_button:
            self.action_cancel_subagent()
        elif event.button is self._transcript_button:
            self.action_toggle_transcript()

    def _load_transcript(self) -> None:
        if self.activity is None or not self.activity.history:
            self._transcript.remove_children()
            self._transcript.mount(Static(Content.styled("(no transcript yet)", "$text-muted")))
            return
        self.run_worker(self._read_transcript(Path(self.activity.history)), group="subagent-transcript",
                        exclusive=True)

    async def _read_transcript(self, path: Path) -> None:
        """Read the history off the UI thread, then draw it with the chat's blocks."""
        from tui.app.widgets.tail_blocks import tail_blocks

        records = await asyncio.to_thread(read_tail_records, path, TRANSCRIPT_RECORDS)
        if self._loaded_from == len(records) and self._transcript.children:
            return
        self._loaded_from = len(records)
        blocks = tail_blocks(SessionTail(session_id="", title=None, records=records))
        with self.app.batch_update():
            await self._transcript.remove_children()
            if not blocks:
                await self._transcript.mount(Static(Content.styled("(nothing recorded yet)", "$text-muted")))
            else:
                await self._transcript.mount_all(blocks)


TASK_TOOL = "task"


def task_description(args_json: str) -> str:
    """The ``description`` argument of a ``task`` call (its block's title before the subagent's news comes)."""
    try:
        args = json.loads(args_json) if args_json else {}
    except ValueError:
        return ""
    value = args.get("description") if isinstance(args, dict) else None
    return one_line(value) if isinstance(value, str) else ""


class SubagentBlocks:
    """The chat's subagent blocks of the running turn, by ``task`` call id (the live turn feeds them)."""

    def __init__(self) -> None:
        self._blocks: dict[str, SubagentBlock] = {}

    def start(self, call_id: str, args_json: str) -> SubagentBlock:
        """The block for a ``task`` call that just started (the caller mounts it)."""
        block = SubagentBlock(call_id, task_description(args_json))
        self._blocks[call_id] = block
        return block

    def activity(self, event: SubagentActivity) -> None:
        block = self._blocks.get(event.call_id)
        if block is not None:
            block.update_activity(event)

    def finish(self, call_id: str, preview: str) -> bool:
        """The ``task`` call's result arrived: True when it was a subagent's block."""
        block = self._blocks.get(call_id)
        if block is None:
            return False
        block.set_result(preview)
        return True

    def clear(self) -> None:
        self._blocks.clear()
