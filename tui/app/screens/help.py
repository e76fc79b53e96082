"""F1: every command with its key and slash form, generated from the registry."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static

from tui.app.command_registry import COMMANDS
from tui.app.screens.confirm import DialogScreen

EXTRA_KEYS = (
    ("enter", "send the prompt"),
    ("ctrl+j", "new line in the prompt"),
    ("esc", "cancel the running turn"),
    ("ctrl+c", "copy the selection (terminal OSC 52, and pbcopy/wl-copy/xclip/xsel when present)"),
    ("ctrl+p", "command palette"),
    ("f", "on a selected chat message (click it or Tab to it): fork the session there"),
)


def help_text() -> Content:
    width = max(len(command.slash) for command in COMMANDS)
    lines = [Content.styled("Commands (type them, press their key, or use the palette)", "bold")]
    for command in COMMANDS:
        key = command.key_label or ""
        lines.append(Content.assemble((f"{command.slash:<{width}}  ", "$accent"), (f"{key:>4}  ", "bold"),
                                      command.description))
    lines += [Content(""), Content.styled("Keys", "bold")]
    lines += [Content.assemble((f"{key:<8}", "bold"), text) for key, text in EXTRA_KEYS]
    return Content("\n").join(lines)


class HelpScreen(DialogScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close"), Binding("f1", "close", show=False)]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "deep-tui help"
            yield Static(help_text(), classes="dialog--message")
            with Horizontal(classes="dialog--buttons"):
                yield Button("Close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
