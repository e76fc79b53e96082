"""F1: every command with its key and slash form, generated from the registry."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from tui.app.command_registry import all_commands
from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen

if TYPE_CHECKING:
    from textual.app import ComposeResult

EXTRA_KEYS = (
    ("enter", "send the prompt (queued while a turn is running)"),
    ("ctrl+j", "new line in the prompt"),
    ("↑ ↓", "earlier prompts of this session (in a one-line prompt)"),
    ("/ tab", "complete a command; // starts a message with a /"),
    ("@ tab", "complete a file; @path sends the file with the prompt"),
    ("!cmd", "run a shell command yourself (sandboxed, no dialog); its output goes with your next prompt"),
    ("pgup pgdn", "scroll the chat (home/end too, in an empty prompt)"),
    ("esc", "cancel the running turn; queued prompts come back"),
    ("esc esc", "in an empty prompt: rewind (take back what a prompt changed)"),
    ("ctrl+c", "copy a selection, or cancel the turn, or clear the prompt"),
    ("ctrl+d", "in an empty prompt: quit (so does ctrl+c twice)"),
    ("ctrl+f", "on a selected chat message: fork there (asks first)"),
    ("ctrl+p", "command palette"),
)
KEY_WIDTH = max(len(key) for key, _ in EXTRA_KEYS) + 2


def _hanging(prefix: Content, text: str, width: int | None) -> Content:
    """``prefix`` then ``text``; with ``width``, ``text`` wraps under itself (never back to column 0)."""
    room = (width or 0) - prefix.cell_length
    if width is None or room < 12:
        return Content.assemble(prefix, text)
    indent = "\n" + " " * prefix.cell_length
    return Content.assemble(prefix, indent.join(textwrap.wrap(text, room, break_on_hyphens=False)))


def help_text(width: int | None = None) -> Content:
    """The help; with ``width`` (the cells it has), each description wraps under itself."""
    slash_width = max(len(command.slash) for command in all_commands())
    lines = [Content.styled("Commands (type them, press their key, or use the palette)", "bold")]
    for command in all_commands():
        key = command.key_label or ""
        prefix = Content.assemble((f"{command.slash:<{slash_width}}  ", "$accent"), (f"{key:>4}  ", "bold"))
        lines.append(_hanging(prefix, command.shown_description, width))
    lines += [Content(""), Content.styled("Keys", "bold")]
    lines += [_hanging(Content.styled(f"{key:<{KEY_WIDTH}}", "bold"), text, width) for key, text in EXTRA_KEYS]
    lines += [Content(""), Content.styled("Letters typed while a chat message is selected go to the prompt. "
                                          "Problems are logged to deep-tui.log in the data directory "
                                          "(--debug logs more).", "$text-muted")]
    return Content("\n").join(lines)


class HelpText(Static):
    """The help, laid out again for its width (descriptions wrap under themselves)."""

    _laid_out_for: int | None = None

    def on_resize(self) -> None:
        width = self.content_region.width
        if width and width != self._laid_out_for:
            self._laid_out_for = width
            self.update(help_text(width))


class HelpScreen(DialogScreen[None]):
    """Every command and key; the text scrolls when the terminal is short."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f1", "close", show=False),
        *(Binding(key, f"scroll('{how}')", show=False) for key, how in (
            ("up", "scroll_up"), ("down", "scroll_down"), ("pageup", "scroll_page_up"), ("pagedown", "scroll_page_down"))),
    ]
    DEFAULT_CSS = """
    HelpScreen .dialog { height: 90%; width: 80; }
    HelpScreen #help-body { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "deep-tui help"
            with VerticalScroll(id="help-body"):
                yield HelpText(help_text(), classes="dialog--message")
            with ButtonRow(classes="dialog--buttons"):
                yield Button("Close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll(self, how: str) -> None:
        """Arrows and page keys scroll the help text wherever the focus is."""
        getattr(self.query_one("#help-body", VerticalScroll), how)(animate=False)
