"""``/model`` without a name: choose from the model in use, recent ones, the offline model and the models of every
provider whose key is set; type to filter, Enter or a click picks, Esc keeps the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.fuzzy import Matcher
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.agent.model_catalogue import ModelEntry
from tui.app.formatting import human_tokens
from tui.app.screens.confirm import ButtonRow, DialogScreen, action_button
from tui.text.terminal_text import visible


def entry_label(entry: ModelEntry, width: int = 34) -> Content:
    """``anthropic:claude-sonnet-5-5     200k  ANTHROPIC_API_KEY set``."""
    window = human_tokens(entry.window) if entry.window else "?"
    return Content.assemble((f"{visible(entry.name):<{width}}", "bold"), (f"{window:>6}  ", "$text"),
                            (visible(entry.note), "$text-muted"))


def matching(entries: Sequence[ModelEntry], query: str) -> list[ModelEntry]:
    """``entries`` whose name matches ``query`` (fuzzy), best first; all of them, in order, for no query."""
    if not query.strip():
        return list(entries)
    matcher = Matcher(query.strip())
    scored = [(matcher.match(entry.name), order, entry) for order, entry in enumerate(entries)]
    return [entry for score, _, entry in sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))]


class ModelChooser(DialogScreen[str | None]):
    """Dismisses with the chosen model's name, or ``None`` (Esc, Cancel)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "cursor('down')", show=False),
        Binding("up", "cursor('up')", show=False),
        Binding("enter", "choose", "Use", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    ModelChooser .dialog { width: 76; }
    ModelChooser #models {
        height: auto; max-height: 50vh; border: none; padding: 0; background: $surface;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    ModelChooser #filter { margin: 1 0 0 0; }
    """

    def __init__(self, entries: Sequence[ModelEntry], current: str) -> None:
        super().__init__()
        self.entries = list(entries)
        self.current = current
        self.shown: list[ModelEntry] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Switch the model"
            dialog.border_subtitle = f"in use: {visible(self.current)}"
            yield Input(placeholder="type to filter, or a provider:model name", id="filter", compact=True)
            yield OptionList(id="models")
            yield Static("↑↓ choose · Enter use · Esc keep the current model · the window is in tokens",
                         classes="dialog--hint")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Cancel (esc)", "screen.cancel", id="cancel", focusable=False)
                yield action_button("Use (enter)", "screen.choose", variant="primary", id="use", focusable=False)

    def on_mount(self) -> None:
        self._show("")
        self.query_one("#filter", Input).focus()

    def _show(self, query: str) -> None:
        self.shown = matching(self.entries, query)
        options = self.query_one("#models", OptionList)
        options.set_options(Option(entry_label(entry)) for entry in self.shown)
        if self.shown:
            options.highlighted = 0

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self._show(event.value)

    @on(OptionList.OptionSelected, "#models")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.shown):
            self.dismiss(self.shown[event.option_index].name)

    def action_cursor(self, direction: str) -> None:
        options = self.query_one("#models", OptionList)
        if direction == "down":
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def action_choose(self) -> None:
        """The highlighted model; with nothing listed, a typed ``provider:model`` name is used as it is."""
        index = self.query_one("#models", OptionList).highlighted
        if self.shown and index is not None and index < len(self.shown):
            self.dismiss(self.shown[index].name)
            return
        typed = self.query_one("#filter", Input).value.strip()
        if typed:
            self.dismiss(typed)

    def action_cancel(self) -> None:
        self.dismiss(None)
