"""The completion list under the prompt: commands after ``/``, model names after ``/model ``, files after ``@``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui.app.command_registry import Command, rank

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["CommandSuggestions", "Suggestion", "SuggestionKind"]

SuggestionKind = Literal["command", "model", "file"]


@dataclass(frozen=True)
class Suggestion:
    """One entry of the completion list: a command, a model name or a file path."""

    kind: SuggestionKind
    value: str
    label: Content
    command: Command | None = None


class CommandSuggestions(OptionList, can_focus=False):
    """The completion list under the prompt: the commands matching what follows a ``/``, the model names after
    ``/model ``, the files after an ``@`` (the keyboard stays in the prompt)."""

    DEFAULT_CSS = """
    CommandSuggestions {
        display: none;
        height: auto;
        max-height: 8;
        border: none;
        padding: 0 1;
        background: $boost;
    }
    CommandSuggestions.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Suggestion] = []

    def show_for(self, typed: str) -> None:
        """List the commands matching ``typed`` (the text after the ``/``); hidden when none match."""
        self.show_items([
            Suggestion("command", command.name, Content.assemble((f"{command.slash:<18}", "bold $accent"),
                                                                 (command.shown_description, "$text-muted")), command)
            for command, _ in rank(typed, descriptions=False)
        ])

    def show_items(self, items: Sequence[Suggestion]) -> None:
        """List ``items`` (hidden when there are none), the first highlighted."""
        self.items = list(items)
        self.set_options(Option(item.label) for item in self.items)
        if self.items:
            self.highlighted = 0
        self.set_class(bool(self.items), "-shown")

    def hide(self) -> None:
        self.remove_class("-shown")

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    @property
    def commands(self) -> list[Command]:
        """The commands listed (none while the list shows models or files)."""
        return [item.command for item in self.items if item.command is not None]

    @property
    def chosen_item(self) -> Suggestion | None:
        """The highlighted entry."""
        index = self.highlighted
        return self.items[index] if self.shown and index is not None and index < len(self.items) else None

    @property
    def chosen(self) -> Command | None:
        """The highlighted command (None when the list shows models or files)."""
        item = self.chosen_item
        return item.command if item is not None else None
