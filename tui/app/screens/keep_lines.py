"""``/keep`` alone: the session's standing instructions, each with a delete button (and ``d`` on the focused one).

The dialog holds no session: it is given the lines and a ``delete`` callable (the session's ``remove_keep``),
and shows what that returns; a deletion that fails is one notification and the list stays as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from tui.app.formatting import literal
from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen, action_button
from tui.store.task_state import KeepLine, TaskState, TaskStateError

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import ComposeResult


class KeepLinesModal(DialogScreen[None]):
    """The standing instructions of the session; Esc closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("d,delete", "delete_focused", "Delete", show=False),
    ]
    DEFAULT_CSS = """
    KeepLinesModal .keep--list { height: auto; max-height: 12; }
    KeepLinesModal .keep--row { height: auto; width: 1fr; }
    KeepLinesModal .keep--text { width: 1fr; }
    KeepLinesModal .keep--row Button { min-width: 10; margin-left: 1; }
    KeepLinesModal .keep--empty { color: $text-muted; margin: 1 0; }
    """

    def __init__(self, lines: tuple[KeepLine, ...], delete: Callable[[int], TaskState]) -> None:
        super().__init__()
        self._lines = lines
        self._delete = delete

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Standing instructions"
            dialog.border_subtitle = "honoured for the whole session · /keep TEXT adds one"
            yield VerticalScroll(*self._rows(), classes="keep--list")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Close (Esc)", "screen.close", id="close")

    def _rows(self) -> list[Static | Horizontal]:
        if not self._lines:
            return [Static(Content("No standing instructions yet: /keep TEXT adds one (\"never touch migrations/\")."),
                           classes="keep--empty")]
        return [Horizontal(Static(literal(f"{index + 1}. {line.text}"), classes="keep--text"),
                           Button(Content("Delete"), id=f"delete-{index}", compact=True, variant="error"),
                           classes="keep--row")
                for index, line in enumerate(self._lines)]

    def on_mount(self) -> None:
        first = self.query(Button).first()
        first.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        name = event.button.id or ""
        if name.startswith("delete-"):
            event.stop()
            self._delete_line(int(name.removeprefix("delete-")))

    def action_delete_focused(self) -> None:
        focused = self.focused
        if isinstance(focused, Button) and (focused.id or "").startswith("delete-"):
            self._delete_line(int((focused.id or "").removeprefix("delete-")))

    def _delete_line(self, index: int) -> None:
        try:
            state = self._delete(index)
        except (TaskStateError, OSError) as error:
            self.notify(str(error), title="Not deleted", severity="error")
            return
        self._lines = state.keep
        listing = self.query_one(".keep--list", VerticalScroll)
        with self.app.batch_update():
            listing.remove_children()
            listing.mount_all(self._rows())
        self.call_after_refresh(self.on_mount)

    def action_close(self) -> None:
        self.dismiss(None)
