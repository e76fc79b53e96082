"""``/model`` without a name: choose from the model in use, recent ones, the offline model and the models of every
provider whose key is set; type to filter, Enter or a click picks, Esc keeps the model."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len, set_cell_size
from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.fuzzy import Matcher
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen, action_button
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from collections.abc import Sequence

    from textual.app import ComposeResult

    from tui.agent.models.catalogue import ModelEntry

NAME_WIDTH = 34
"""The name column where there is room; a longer name is cut with ``…`` so the window column stays aligned."""
MIN_NAME_WIDTH = 20
NOTE_WIDTH = 12
"""Room kept for the note (``OPENAI_API_KEY set``) when a narrow dialog takes columns from the name."""


def name_width(row_width: int | None) -> int:
    """The name column for rows ``row_width`` cells wide (``None``: not laid out yet)."""
    if row_width is None:
        return NAME_WIDTH
    return max(MIN_NAME_WIDTH, min(NAME_WIDTH, row_width - 8 - NOTE_WIDTH))
HINT = "↑↓ choose · Enter use · Esc cancel · windows in tokens"


def fit_name(name: str, width: int = NAME_WIDTH) -> str:
    """``name`` in ``width`` cells: cut with ``…`` when longer (the whole name is in the filter's matches)."""
    return name if cell_len(name) <= width else set_cell_size(name, width - 1) + "…"


def entry_label(entry: ModelEntry, width: int = NAME_WIDTH) -> Content:
    """``anthropic:claude-sonnet-5-5     200k  ANTHROPIC_API_KEY set``."""
    name = fit_name(visible(entry.name), width)
    return Content.assemble((set_cell_size(name, width), "bold"), (f" {entry.window_text:>5}  ", "$text"),
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
    ModelChooser .dialog--hint { height: auto; text-wrap: wrap; }
    """

    def __init__(self, entries: Sequence[ModelEntry], current: str) -> None:
        super().__init__()
        self.entries = list(entries)
        self.current = current
        self.shown: list[ModelEntry] = []
        self._laid_out_for: int | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Switch the model"
            dialog.border_subtitle = f"in use: {visible(self.current)}"
            yield Input(placeholder="type to filter, or a provider:model name", id="filter", compact=True)
            yield OptionList(id="models")
            yield Static(HINT, classes="dialog--hint")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Cancel (esc)", "screen.cancel", id="cancel", focusable=False)
                yield action_button("Use (enter)", "screen.choose", variant="primary", id="use", focusable=False)

    def on_mount(self) -> None:
        self._show("")
        self.query_one("#filter", Input).focus()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Lay the rows out again for the list's width, once known or changed (the highlight kept)."""
        options = self.query_one("#models", OptionList)
        if name_width(options.scrollable_content_region.width or None) != self._laid_out_for:
            highlighted = options.highlighted
            self._show(self.query_one("#filter", Input).value)
            if highlighted is not None and highlighted < len(self.shown):
                options.highlighted = highlighted

    def _show(self, query: str) -> None:
        self.shown = matching(self.entries, query)
        options = self.query_one("#models", OptionList)
        width = name_width(options.scrollable_content_region.width or None)
        self._laid_out_for = width
        options.set_options(Option(entry_label(entry, width)) for entry in self.shown)
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
