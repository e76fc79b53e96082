"""Prompts sent while a turn is running (or while the session opens), shown above the prompt until sent.

Each row says it is queued and has *edit* (back into the prompt, out of the queue) and *cancel*.
The app sends the oldest when the turn ends. At most :data:`SHOWN_ROWS` rows show (the oldest, sent first); a
last line says how many more wait, so a long queue never looks shorter than it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

if TYPE_CHECKING:
    from textual.app import ComposeResult

__all__ = ["PromptQueue", "QueuedPrompt"]

SHOWN_ROWS = 5
"""Queued prompts shown as rows; the rest are counted on the line below them."""


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class QueuedPrompt(Horizontal):
    """One waiting prompt: ``queued  <text>  [edit] [cancel]``."""

    DEFAULT_CSS = """
    QueuedPrompt { height: 1; width: 1fr; }
    QueuedPrompt .queued-label { width: auto; color: $warning; text-style: bold; padding: 0 1 0 0; }
    QueuedPrompt .queued-text { width: 1fr; height: 1; text-wrap: nowrap; text-overflow: ellipsis; color: $text-muted; }
    QueuedPrompt Button { width: auto; min-width: 6; margin: 0 0 0 1; }
    """

    def __init__(self, text: str) -> None:
        super().__init__(classes="queued-prompt")
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static("queued", classes="queued-label")
        yield Static(Content(_one_line(self.text)), classes="queued-text")
        yield Button("edit", classes="queued-edit", compact=True)
        yield Button("cancel", classes="queued-cancel", compact=True, variant="error")


class PromptQueue(Vertical):
    """The waiting prompts, oldest first (hidden while empty)."""

    DEFAULT_CSS = """
    PromptQueue { height: auto; max-height: 6; padding: 0 1; display: none; background: $boost; }
    PromptQueue.-waiting { display: block; }
    PromptQueue .queued-more { height: 1; color: $text-muted; display: none; }
    PromptQueue.-more .queued-more { display: block; }
    """

    @dataclass
    class Edit(Message):
        """The user wants ``text`` back in the prompt (it has left the queue)."""

        text: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[QueuedPrompt] = []
        self._more = Static("", classes="queued-more")

    def compose(self) -> ComposeResult:
        yield self._more

    def _show_rows(self) -> None:
        """The oldest :data:`SHOWN_ROWS` rows, and "+N more queued" for the rest."""
        for number, row in enumerate(self._rows):
            row.display = number < SHOWN_ROWS
        hidden = len(self._rows) - SHOWN_ROWS
        self.set_class(hidden > 0, "-more")
        self._more.update(f"+{hidden} more queued (sent in order; ↑ in an empty prompt takes the newest back)"
                          if hidden > 0 else "")
        self.set_class(bool(self._rows), "-waiting")

    @property
    def texts(self) -> list[str]:
        """The queued prompts, oldest first."""
        return [row.text for row in self._rows]

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, text: str) -> None:
        row = QueuedPrompt(text)
        self._rows.append(row)
        self.mount(row, before=self._more if self._more.is_attached else None)
        self._show_rows()

    def _take(self, row: QueuedPrompt) -> str:
        self._rows.remove(row)
        row.remove()
        self._show_rows()
        return row.text

    def pop_oldest(self) -> str | None:
        """Take the oldest prompt out of the queue (to send it)."""
        return self._take(self._rows[0]) if self._rows else None

    def pop_newest(self) -> str | None:
        """Take the newest prompt out of the queue (to edit it)."""
        return self._take(self._rows[-1]) if self._rows else None

    def take_all(self) -> list[str]:
        """Empty the queue; its prompts, oldest first."""
        return [self._take(row) for row in list(self._rows)]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        row = next((ancestor for ancestor in event.button.ancestors if isinstance(ancestor, QueuedPrompt)), None)
        if row is None or row not in self._rows:
            return
        event.stop()
        text = self._take(row)
        if event.button.has_class("queued-edit"):
            self.post_message(self.Edit(text))
        else:
            self.notify(f"removed from the queue: {_one_line(text, 60)}", timeout=3, markup=False)
