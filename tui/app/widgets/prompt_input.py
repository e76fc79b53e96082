"""The prompt: a TextArea where Enter sends and Ctrl+J inserts a newline."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea


class PromptInput(TextArea):
    """Multi-line prompt editor; posts :class:`PromptInput.Submitted` on Enter."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 10; }
    """

    @dataclass
    class Submitted(Message):
        text: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, compact=True)
        self.placeholder = "Type a message — Enter sends, Ctrl+J new line, / for commands"

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            text = self.text.strip()
            if text:
                self.post_message(self.Submitted(text))
                self.clear()
            return
        if event.key == "ctrl+j":
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        await super()._on_key(event)
