"""An assistant answer: Markdown, streamed by appending deltas to one ``MarkdownStream``.

In its own module because Markdown (markdown-it, Pygments) is the heaviest import of the chat;
the first frame of an empty session does not need it, so it is loaded with the first answer.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import BindingType
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from tui.app.widgets.blocks import FORK_BINDING, ForkAt


class AssistantBlock(Markdown, can_focus=True):
    """One answer; streamed answers get deltas appended through one ``MarkdownStream``."""

    BINDINGS: ClassVar[list[BindingType]] = [FORK_BINDING]

    def action_fork_here(self) -> None:
        if self.message_index is not None:
            self.post_message(ForkAt(self.message_index + 1))

    def __init__(self, text: str = "", *, message_index: int | None = None) -> None:
        super().__init__(text, classes="assistant-block")
        self.message_index = message_index
        self._stream: MarkdownStream | None = None
        self.received = text

    async def add_delta(self, delta: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self.received += delta
        await self._stream.write(delta)

    async def finish(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
