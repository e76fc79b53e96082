"""An assistant answer: settled Markdown segments, plus one cheap growing tail while it streams.

A streamed answer is fed deltas at network speed (:meth:`AssistantBlock.feed` only stores them) and
drawn at frame rate (:meth:`AssistantBlock.render_pending`). A
:class:`~tui.app.markdown_blocks.MarkdownSplitter` decides which top-level blocks have closed: each
frame's closed blocks become one :class:`AnswerSegment` (Markdown, parsed and mounted once, never
touched again; code highlighted then) — except runs of plain list items, which go into one growing
:class:`~tui.app.widgets.settled_list.SettledList` per list (Markdown would mount ~5 widgets per
item), and runs of plain paragraphs into one growing :class:`~tui.app.widgets.settled_prose.SettledProse`
(Markdown would mount a widget per paragraph) — and the block still being written is shown as plain text in
one :class:`~tui.app.widgets.growing_text.GrowingText` that only appends. A frame therefore costs
O(new text) whatever the length of the answer or of the open paragraph or code fence.

In its own module because Markdown (markdown-it, Pygments) is the heaviest import of the chat;
the first frame of an empty session does not need it, so it is loaded with the first answer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, ClassVar

from markdown_it import MarkdownIt
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Markdown

from tui.app.markdown_blocks import MarkdownSplitter, is_fence_line
from tui.app.widgets.chat_blocks import FORK_BINDING, ForkAt, cut_short_mark
from tui.app.widgets.code_fence import AnswerFence
from tui.app.widgets.folding import FoldedSpace, far_above
from tui.app.widgets.growing_text import GrowingText
from tui.app.widgets.settled_list import SettledList, list_runs, may_hold_list
from tui.app.widgets.settled_prose import SettledProse, plain_paragraphs

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.binding import BindingType
    from textual.widgets.markdown import MarkdownBlock

__all__ = ["AnswerSegment", "AssistantBlock"]

KEEP_SEGMENTS = 1
"""The newest segments of a streaming answer always left displayed; older ones above the view are folded."""


@cache
def _parser() -> MarkdownIt:
    """One markdown-it parser for every answer (building one costs more than parsing a list item)."""
    return MarkdownIt("gfm-like")


class AnswerSegment(Markdown):
    """Complete Markdown blocks of an answer, parsed once when mounted (``ready`` is set then)."""

    DEFAULT_CSS = """
    AnswerSegment { padding: 0; }
    """

    def get_block_class(self, block_name: str) -> type[MarkdownBlock]:
        """Code blocks say when their lines are cut at the edge (:mod:`tui.app.widgets.code_fence`)."""
        if block_name in ("fence", "code_block"):
            return AnswerFence
        return super().get_block_class(block_name)

    def __init__(self, text: str) -> None:
        super().__init__(text, classes="answer-segment")
        self.ready = asyncio.Event()
        self._list_continues = False

    def list_continues(self) -> None:
        """The next segment starts with a further item of the list this one ends with: no gap between."""
        self._list_continues = True
        if self.ready.is_set():
            self.styles.margin = (self.styles.margin.top, 0, 0, 0)

    def _on_markdown_table_of_contents_updated(self, message: Markdown.TableOfContentsUpdated) -> None:
        """Parsed and mounted: take over the first block's top and the last block's bottom margin, so
        that margins between segments collapse as they do between the blocks of one document."""
        if message.markdown is not self or self.ready.is_set():
            return
        message.stop()
        blocks = list(self.children)
        if blocks:
            first, last = blocks[0], blocks[-1]
            top, bottom = first.styles.margin.top, last.styles.margin.bottom
            first.styles.margin = (0, *first.styles.margin[1:])
            last.styles.margin = (*last.styles.margin[:2], 0, last.styles.margin.left)
            self.styles.margin = (top, 0, 0 if self._list_continues else bottom, 0)
        self.ready.set()
        self.post_message(self.Ready(self))

    @dataclass
    class Ready(Message):
        """The segment's blocks are on screen."""

        segment: AnswerSegment


class AssistantBlock(Widget, can_focus=True):
    """One answer. Recorded answers are one segment; streamed answers grow segment by segment."""

    DEFAULT_CSS = """
    AssistantBlock { height: auto; layout: vertical; }
    AssistantBlock > GrowingText { margin: 0 0 1 0; }
    AssistantBlock > .cut-short { color: $text-muted; text-style: italic; margin: 0 0 1 0; }
    AssistantBlock > GrowingText.-code {
        margin: 1 0; padding: 1 2; color: rgb(210,210,210); background: black 10%;
        &:light { background: white 30%; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [FORK_BINDING]

    def __init__(self, text: str = "", *, message_index: int | None = None, cut_short: bool = False) -> None:
        """``cut_short``: a recorded answer the model did not finish (a line under it says so)."""
        super().__init__(classes="assistant-block")
        self.message_index = message_index
        self.cut_short = cut_short
        self._parts: list[str] = [text] if text else []
        self._joined: str | None = text
        self._pending: list[str] = []
        self._splitter: MarkdownSplitter | None = None if text else MarkdownSplitter()
        self._tail: GrowingText | None = None if text else GrowingText()
        self._opened = 0
        self._settling: set[AnswerSegment] = set()
        """Segments mounted but not parsed yet: until they are, the tail keeps showing their text."""
        self._space: FoldedSpace | None = None if text else FoldedSpace()
        self._last_settled: AnswerSegment | SettledList | SettledProse | None = None
        self._previewed = 0
        """Characters of the pending text the tail already shows (:meth:`preview_pending`)."""

    def compose(self) -> ComposeResult:
        if self._tail is not None:
            assert self._space is not None
            yield self._space
            yield self._tail
        else:
            yield AnswerSegment(self.received)
            if self.cut_short:
                yield cut_short_mark()

    def action_fork_here(self) -> None:
        if self.message_index is None:
            self.notify("This message is not saved yet (its turn is still running): fork at it once the turn ends.",
                        severity="warning", markup=False)
            return
        self.post_message(ForkAt(self.message_index + 1))

    @property
    def received(self) -> str:
        """The whole answer as received (shown or not yet)."""
        if self._joined is None:
            self._joined = "".join(self._parts)
            self._parts = [self._joined]
        return self._joined

    @property
    def source(self) -> str:
        """The answer's Markdown source."""
        return self.received

    @property
    def behind(self) -> bool:
        """Received text is not fully drawn yet."""
        return bool(self._pending) or bool(self._settling)

    def feed(self, delta: str) -> None:
        """Take a delta (O(1)): it is drawn by the next :meth:`render_pending`."""
        if delta:
            self._parts.append(delta)
            self._joined = None
            self._pending.append(delta)

    async def render_pending(self) -> None:
        """Draw what arrived since the last frame: closed blocks become a segment, the tail grows."""
        splitter, tail = self._splitter, self._tail
        if not self._pending or splitter is None or tail is None:
            return
        text = "".join(self._pending)
        self._pending.clear()
        previewed, self._previewed = self._previewed, 0
        self._fold_far_segments()
        closed = splitter.feed(text)
        if closed.text.strip():
            await self._settle(closed.text, continues_list=closed.continues_list)
        if self._settling or (splitter.opened == self._opened and not closed.text):
            tail.append(text[previewed:])  # a segment still parsing: the tail shows its text until it is on screen
        else:
            self._show_open_block()

    def preview_pending(self) -> bool:
        """Show the text received since the last frame in the tail now, as plain text, without settling the
        blocks it closes (the answer's last words should not wait for a long code block to be parsed); the next
        :meth:`render_pending` settles it as usual. A fence that closes the tail's code block is left out (it is
        not code). Returns whether anything was added."""
        tail = self._tail
        if tail is None or not self._pending or self._splitter is None:
            return False
        text = "".join(self._pending)
        self._pending[:] = [text]
        shown = text[self._previewed:]
        if tail.has_class("-code"):
            lines = shown.split("\n")
            while lines and (is_fence_line(lines[-1]) or not lines[-1].strip()) and len(lines) > 1:
                lines.pop()
            shown = "\n".join(lines) + ("\n" if len(lines) < len(shown.split("\n")) else "")
        self._previewed = len(text)
        tail.append(shown)
        return bool(shown)

    async def settled(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, until the segments mounted so far are parsed and on screen (Textual's
        Markdown parses after mounting: that cost belongs to the frame that mounted them)."""
        deadline = time.monotonic() + timeout
        while self._settling and self.is_attached and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    async def finish(self) -> None:
        """The answer is complete: draw the rest; the open block becomes Markdown too."""
        await self.render_pending()
        splitter = self._splitter
        if splitter is None:
            return
        continues = splitter.open_continues_list
        rest = splitter.finish()
        self._splitter = None
        if rest.strip():
            await self._settle(rest, continues_list=continues)
        for segment in list(self._settling):
            while not segment.ready.is_set() and segment.is_attached:  # removed with the chat: never ready
                await asyncio.sleep(0.01)
        if self._tail is not None and self._tail.is_attached:
            await self._tail.remove()
        self._tail = None

    def _fold_far_segments(self) -> None:
        """Keep a long answer's layout small: settled segments above the view leave the layout."""
        space, view = self._space, self.parent
        if space is None or not isinstance(view, Widget):
            return
        children = list(self.children)
        last = space.folded[-1] if space.folded and space.folded[-1] in children else space
        shown = [child for child in children[children.index(last) + 1:] if child.display and (
            isinstance(child, (SettledList, SettledProse))
            or (isinstance(child, AnswerSegment) and child.ready.is_set()))]
        far: list[Widget] = []
        for segment in shown[:-KEEP_SEGMENTS]:
            if not far_above(segment, view):
                break
            far.append(segment)
        if far:
            space.fold(far, shown[len(far)])

    def on_answer_segment_ready(self, message: AnswerSegment.Ready) -> None:
        message.stop()
        self._settling.discard(message.segment)
        if not self._settling and self._splitter is not None:
            self._show_open_block()

    async def _settle(self, text: str, *, continues_list: bool) -> None:
        """Closed blocks go on screen: plain list items into one growing :class:`SettledList`, plain paragraphs
        into one growing :class:`SettledProse`, the rest as Markdown segments."""
        runs = list_runs(text, _parser().parse(text)) if may_hold_list(text) else [(text, None)]
        for source, lists in runs:
            previous = self._last_settled
            paragraphs = plain_paragraphs(_parser().parse(source)) if lists is None else None
            if paragraphs is not None:
                if isinstance(previous, SettledProse):
                    previous.extend(paragraphs)
                else:
                    if continues_list and previous is not None:
                        previous.list_continues()
                    self._last_settled = SettledProse(paragraphs)
                    await self.mount(self._last_settled, before=self._tail)
            elif lists is None:
                segment = AnswerSegment(source)
                if continues_list and previous is not None:
                    previous.list_continues()
                self._last_settled = segment
                self._settling.add(segment)
                await self.mount(segment, before=self._tail)
            else:
                first, *others = lists
                if continues_list and isinstance(previous, SettledList) and previous.ordered == first.ordered:
                    previous.extend(first)
                else:
                    others.insert(0, first)
                    if continues_list and previous is not None:
                        previous.list_continues()
                for block in others:
                    self._last_settled = SettledList(block)
                    await self.mount(self._last_settled, before=self._tail)
            continues_list = False

    def _show_open_block(self) -> None:
        """The tail shows the open block only (the closed ones are on screen as segments)."""
        splitter, tail = self._splitter, self._tail
        if splitter is None or tail is None:
            return
        self._opened = splitter.opened
        code = splitter.open_kind == "code"
        tail.wrap = not code
        tail.set_class(code, "-code")
        tail.reset(splitter.open_code_lines[1] if code else splitter.open_text)
