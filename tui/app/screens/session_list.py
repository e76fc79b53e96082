"""The picker's list of sessions: single-key actions, and typing that goes to the filter."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input, OptionList

if TYPE_CHECKING:
    from textual import events


class SessionList(OptionList):
    """The picker's list: single-key actions, and any other printable key types into the filter."""

    DEFAULT_CSS = """
    SessionList {
        height: 1fr;
        border: none;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        background: $surface;
        &:focus { border: none; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "screen.fork", "Fork", show=False),
        Binding("r", "screen.rename", "Rename", show=False),
        Binding("d", "screen.delete", "Delete", show=False),
        Binding("n", "screen.new", "New", show=False),
    ]

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character and event.character not in "frdn":
            event.stop()
            event.prevent_default()
            filter_input = self.screen.query_one("#filter", Input)
            filter_input.focus()
            filter_input.insert_text_at_cursor(event.character)
