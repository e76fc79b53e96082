"""The chat pane: the recent part of the transcript, earlier pages on demand, live turns appended."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widgets import Button, Collapsible

from tui.app.widgets.folding import FoldedSpace, far_above

if TYPE_CHECKING:
    from collections.abc import Sequence

    from textual.widget import Widget

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.agent.turn_events import SubagentActivity, ToolCallFinished, ToolCallStarted
    from tui.app.widgets.answer_block import AssistantBlock
    from tui.app.widgets.chat_blocks import CompactionDivider, ToolBlock
    from tui.app.widgets.subagent_block import SubagentBlocks
    from tui.app.widgets.thinking_block import ThinkingBlock
    from tui.chain.events import CompactionFailed, CompactionFinished

PAGE_SIZE = 20


class ChatView(VerticalScroll):
    """Mounts only the newest ``PAGE_SIZE`` messages of a session; "load earlier" adds a page above."""

    DEFAULT_CSS = """
    ChatView { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.runtime: SessionRuntimeAPI | None = None
        self.loaded_from = 0
        self._finished: dict[int, CompactionFinished] = {}
        self._failed: dict[int, list[CompactionFailed]] = {}
        """Failed compaction attempts by the message index they came before (see ``CompactionFailed``)."""
        self._tools: dict[str, ToolBlock] = {}
        self._subagents: SubagentBlocks | None = None
        """The running turn's subagents (a ``task`` call is drawn as one :class:`SubagentBlock`); made (and its
        module imported) with the first tool call, not for the first frame."""
        self._earlier = Button("load earlier messages", id="load-earlier", compact=True)
        self._loading_earlier = False
        self._space = FoldedSpace()
        self.shown_session = 0
        """Counts the sessions shown (a turn's view stops drawing when it changes)."""

    async def show_session(self, runtime: SessionRuntimeAPI, finished: Sequence[CompactionFinished],
                           failed: Sequence[CompactionFailed] = ()) -> None:
        """Replace the transcript with the tail of ``runtime``'s history; ``failed``: compaction attempts that
        changed nothing, each shown as a line where it happened."""
        from tui.app.widgets.history_blocks import blocks_for  # loads pydantic-ai: not needed for the first frame

        self.workers.cancel_group(self, "load-earlier")  # a page of the previous session: never mounted here
        self._loading_earlier = False
        self.runtime = runtime
        self.shown_session += 1
        self._finished = {event.summary_index: event for event in finished if event.summary_index is not None}
        self._failed = {}
        for attempt in failed:
            if attempt.message_index is not None:
                self._failed.setdefault(attempt.message_index, []).append(attempt)
        self._tools.clear()
        if self._subagents is not None:
            self._subagents.clear()
        await self.remove_children()
        count = runtime.history_count()
        self.loaded_from = max(0, count - PAGE_SIZE)
        messages = runtime.load_history(self.loaded_from, count)
        self._space = FoldedSpace()
        blocks: list[Widget] = [self._earlier, self._space,
                                *blocks_for(messages, self.loaded_from, self._finished, self._failed, last_page=True)]
        self._earlier.display = self.loaded_from > 0
        self._earlier.label = f"load earlier messages ({self.loaded_from} more)"
        await self.mount_all(blocks)
        self.anchor()
        self.scroll_end(animate=False)

    async def load_earlier(self) -> int:
        """Mount the previous page above what is shown; returns how many messages were added."""
        if self.runtime is None or self.loaded_from == 0:
            return 0
        from tui.app.widgets.history_blocks import blocks_for

        start = max(0, self.loaded_from - PAGE_SIZE)
        shown = self.shown_session
        messages = self.runtime.load_history(start, self.loaded_from)
        blocks = blocks_for(messages, start, self._finished, self._failed)
        if shown != self.shown_session or not self._earlier.is_attached:
            return 0  # another session is shown now (a switch or fork while the page was read)
        if blocks:
            self._space.unfold()  # the page goes right after the space, above everything it folded
            await self.mount_all(blocks, after=self._space if self._space.is_attached else self._earlier)
        added = self.loaded_from - start
        self.loaded_from = start
        self._earlier.display = start > 0
        self._earlier.label = f"load earlier messages ({start} more)"
        return added

    async def reveal_message(self, index: int) -> Widget | None:
        """Bring message ``index`` of the history into view (a search hit): load earlier pages until it is
        mounted, then scroll the block that shows it to the top, expand it and select it.

        The block is the last one that starts at or before ``index`` (a tool result shows in its call's block).
        Returns it, or ``None`` when the session has no such message.
        """
        if self.runtime is None or not 0 <= index < self.runtime.history_count():
            return None
        self._space.unfold()
        # A tool result is shown in its call's block, one message earlier: load that far.
        while self.loaded_from > max(0, index - 1) and await self.load_earlier():
            pass
        target: Widget | None = None
        for child in self.children:
            position = getattr(child, "message_index", None)
            if isinstance(position, int) and position <= index:
                target = child
        if target is None:
            return None
        for previous in self.query(".-search-hit"):
            previous.remove_class("-search-hit")
        target.add_class("-search-hit")
        if isinstance(target, Collapsible):
            target.collapsed = False
        self.release_anchor()
        self.call_after_refresh(self.scroll_to_widget, target, top=True, animate=False)
        if target.focusable:
            target.focus(scroll_visible=False)
        return target

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old and self.loaded_from > 0 and not self._loading_earlier:
            self._loading_earlier = True
            self.run_worker(self._load_earlier_at_top(), group="load-earlier", exclusive=True)

    async def _load_earlier_at_top(self) -> None:
        """Scrolled to the top: add the previous page and keep the view where the reader was."""
        try:
            before = self.virtual_size.height
            if await self.load_earlier():
                self.call_after_refresh(lambda: self.scroll_to(y=self.virtual_size.height - before, animate=False))
        finally:
            self._loading_earlier = False

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button is self._earlier:
            event.stop()
            await self.load_earlier()

    async def on_compaction_divider_show_originals(self, event: CompactionDivider.ShowOriginals) -> None:
        if self.runtime is None:
            return
        from tui.app.widgets.history_blocks import original_lines

        messages = self.runtime.load_history(event.start, event.end)
        await event.divider.show_originals(original_lines(messages))

    # -- live turns -----------------------------------------------------------------------

    async def _append(self, widget: Widget) -> None:
        await self.mount(widget)

    async def add_user(self, text: str, *, message_index: int | None = None) -> None:
        """A new prompt: the reader wants its answer, so the view follows the bottom again even if
        it had been scrolled (or moved by focusing an old message) away from it."""
        from tui.app.widgets.chat_blocks import UserBlock  # with the first block, not for the first frame

        await self._append(UserBlock(text, message_index=message_index))
        self.anchor()
        self.scroll_end(animate=False)

    def scroll_to_widget(self, widget: Widget, *args: Any, **kwargs: Any) -> bool:
        """Scroll to ``widget``; a folded block (or one inside a folded answer) is unfolded first."""
        folded = False
        for node in widget.ancestors_with_self:
            if node is self:
                break
            folded = folded or not node.display
        if folded:
            for space in self.query(FoldedSpace):
                space.unfold()
            self.call_after_refresh(lambda: VerticalScroll.scroll_to_widget(self, widget, *args, **kwargs))
            return True
        return super().scroll_to_widget(widget, *args, **kwargs)

    def unfold(self) -> None:
        """Put the blocks folded during a stream back into the layout (a long answer keeps its own fold)."""
        self._space.unfold()

    def fold_far_blocks(self) -> None:
        """Blocks above the view leave the layout (a blank of their height stays), so a frame of
        a streaming answer costs the same with hundreds of answers above it as with none."""
        if not self._space.is_attached:
            return
        children = list(self.children)
        # The folded blocks are consecutive, right after the space: start after them, so a frame costs O(new
        # blocks) and not O(chat) (reading ``display`` of hundreds of folded blocks cost more than the frame).
        folded = self._space.folded
        last = folded[-1] if folded and folded[-1] in children else self._space
        start = children.index(last) + 1
        far: list[Widget] = []
        for child in children[start:]:
            if not child.display:
                continue
            if not far_above(child, self):
                break
            far.append(child)
        if far and far[-1] is not children[-1]:
            following = children[children.index(far[-1]) + 1]
            self._space.fold(far, following)

    async def start_answer(self) -> AssistantBlock:
        from tui.app.widgets.answer_block import AssistantBlock  # Markdown: loaded with the first answer

        block = AssistantBlock()
        await self._append(block)
        return block

    async def start_thinking(self) -> ThinkingBlock:
        from tui.app.widgets.thinking_block import ThinkingBlock

        block = ThinkingBlock()
        await self._append(block)
        return block

    async def add_tool_call(self, event: ToolCallStarted) -> None:
        from tui.app.widgets.subagent_block import TASK_TOOL, SubagentBlocks

        if event.tool_name == TASK_TOOL:  # a subagent: one block with its live activity and transcript
            if self._subagents is None:
                self._subagents = SubagentBlocks()
            await self._append(self._subagents.start(event.call_id, event.args_json))
            return
        from tui.app.widgets.chat_blocks import ToolBlock  # with the first block, not for the first frame

        block = ToolBlock(event.call_id, event.tool_name, event.args_json)
        self._tools[event.call_id] = block
        await self._append(block)

    def subagent_activity(self, event: SubagentActivity) -> None:
        """A subagent's news: its block shows it."""
        if self._subagents is not None:
            self._subagents.activity(event)

    async def add_user_command(self, command: str) -> ToolBlock:
        """The block of the user's ``!command``: its output streams into it."""
        from tui.app.widgets.chat_blocks import ToolBlock  # with the first block, not for the first frame

        block = ToolBlock(f"user-command-{len(self._tools)}", "!", "", call_title=f"! {command}")
        await self._append(block)
        self.anchor()
        self.scroll_end(animate=False)
        return block

    def tool_output(self, call_id: str, pieces: list[str]) -> None:
        """A running tool's output arrived (a shell command's): append it to its block."""
        block = self._tools.get(call_id)
        if block is not None:
            block.stream_output(pieces)

    def tool_output_ended(self, call_id: str, status: str) -> None:
        """A running tool's output is over: its block shows how it ended until the result comes."""
        block = self._tools.get(call_id)
        if block is not None:
            block.show_status(status)

    def finish_tool_call(self, event: ToolCallFinished) -> None:
        if self._subagents is not None and self._subagents.finish(event.call_id, event.preview):
            return
        block = self._tools.get(event.call_id)
        if block is not None:  # after the block's first refresh: its title may not be laid out yet
            block.call_after_refresh(block.set_result, event.preview, event.size_chars,
                                     evicted_path=event.evicted_path, is_error=event.is_error,
                                     saved_chars=event.saved_chars, last_line=event.last_line)

    async def add_divider(self, event: CompactionFinished) -> None:
        """The divider of a compaction made in this session just now: the same as when it is reopened (the
        recorded summary message says what it replaced, so "show the replaced messages" works at once)."""
        from pydantic_ai.messages import ModelRequest

        from tui.app.widgets.chat_blocks import CompactionDivider, DividerInfo
        from tui.app.widgets.history_blocks import divider_info

        recorded = self.runtime.load_history(event.summary_index, event.summary_index + 1) \
            if self.runtime is not None and event.summary_index is not None else []
        if recorded and isinstance(summary := recorded[0], ModelRequest):
            assert event.summary_index is not None
            self._finished[event.summary_index] = event
            divider = CompactionDivider(divider_info(summary, event.summary_index, self._finished))
            divider.message_index = event.summary_index
        else:  # not recorded (a read-only session): what the event says
            divider = CompactionDivider(DividerInfo(
                strategy=event.strategy, replaced=event.messages_replaced, tokens_before=event.tokens_before,
                tokens_after=event.tokens_after, retention=event.retention_score, focus=event.focus, summary="",
                replaced_range=None, missing_count=event.missing if event.low_retention else 0,
                missing=event.missing_identifiers if event.low_retention else ()))
        await self._append(divider)

    async def add_failed_compaction(self, event: CompactionFailed) -> None:
        """A compaction attempt of this session that changed nothing, as one muted line (as it is shown when the
        session is opened again, from events.jsonl)."""
        if event.message_index is not None:
            self._failed.setdefault(event.message_index, []).append(event)
        from tui.app.widgets.chat_blocks import NoticeBlock
        from tui.chain.event_text import failed_compaction_line  # not for the first frame

        await self._append(NoticeBlock(failed_compaction_line(event), tone="muted", classes="failed-compaction"))

    async def add_notice(self, text: str, tone: str = "muted") -> None:
        from tui.app.widgets.chat_blocks import NoticeBlock  # with the first block, not for the first frame

        await self._append(NoticeBlock(text, tone=tone))
