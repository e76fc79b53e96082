"""The dialog that asks before the agent runs a shell command: the command, where and how it runs, the answer.

Keyboard first: ``y`` or Enter allows once, ``p`` allows every command with the same prefix for this session
(offered only for a simple command: never one chaining others with ``;``, ``&&``, ``|``, ``$( )``…), ``a``
allows every command for this session, ``n`` or Esc denies, ``r`` denies with a reason typed for the model
(Enter sends it). Every button does the same on a click. As in the write dialog, the letter keys and Enter
answer only after :data:`~tui.app.screens.write_approval.ARMING_DELAY` (a key typed for the prompt must not
allow anything); Esc and clicks always work. The command is the model's text: shown through
:func:`~tui.text.terminal_text.visible`, as plain content, never markup.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from tui.agent.command_approval import CommandDecision, CommandRequest
from tui.app.screens.confirm import DialogScreen, action_button
from tui.app.screens.write_approval import ARMING_DELAY
from tui.text.terminal_text import visible

__all__ = ["CommandApprovalScreen"]


def _clip(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


class CommandApprovalScreen(DialogScreen[CommandDecision]):
    """Asks about one :class:`CommandRequest`; dismisses with the user's :class:`CommandDecision`."""

    AUTO_FOCUS = "#command-body"

    DEFAULT_CSS = """
    CommandApprovalScreen .dialog {
        width: 90;
        max-height: 90%;
    }
    CommandApprovalScreen #command-where {
        margin-top: 1;
        color: $text-muted;
    }
    CommandApprovalScreen #command-body {
        height: auto;
        max-height: 10;
        margin-top: 1;
        border: round $panel;
        padding: 0 1;
    }
    CommandApprovalScreen #command-reason {
        display: none;
        margin-top: 1;
    }
    CommandApprovalScreen.-reason #command-reason {
        display: block;
    }
    CommandApprovalScreen .dialog--buttons {
        height: auto;
        margin-top: 0;
    }
    CommandApprovalScreen .dialog--buttons Button {
        margin-left: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "key('once')", "Allow once", show=False),
        Binding("p", "key('prefix')", "Allow this prefix for the session", show=False),
        Binding("a", "key('session')", "Allow all commands for the session", show=False),
        Binding("n", "key('deny')", "Deny", show=False),
        Binding("r", "key('reason')", "Deny with a reason", show=False),
        Binding("escape", "answer('deny')", "Deny", show=False),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    def __init__(self, request: CommandRequest) -> None:
        super().__init__()
        self.request = request
        self.armed = False

    def compose(self) -> ComposeResult:
        request = self.request
        prefix = visible(request.prefix) if request.prefix else None
        with Vertical(classes="dialog") as dialog:
            counter = f" ({request.position} of {request.total})" if request.total > 1 else ""
            dialog.border_title = Content(f"Run a shell command?{counter}")
            dialog.border_subtitle = ("y/⏎ once · " + ("p prefix · " if prefix else "")
                                      + "a all · n/esc deny · r reason")
            with VerticalScroll(id="command-body"):
                yield Static(Content(visible(request.command)), id="command-text")
            where = f"in {visible(request.workdir)} · timeout {request.timeout:g} s"
            if request.sandbox:
                where += f" · {visible(request.sandbox)}"
            yield Static(Content(where), id="command-where")
            yield Input(placeholder="why not? (the model reads it) — Enter denies, Esc denies without it",
                        id="command-reason")
            with Horizontal(classes="dialog--buttons", id="allow-buttons"):
                yield action_button("Allow all commands (a)", "screen.answer('session')", id="allow-session")
                yield action_button("Allow once (y)", "screen.answer('once')", variant="primary", id="allow-once")
            if prefix:
                with Horizontal(classes="dialog--buttons", id="prefix-buttons"):
                    yield action_button(f"Allow {_clip(prefix)} … (p)", "screen.answer('prefix')", id="allow-prefix")
            with Horizontal(classes="dialog--buttons", id="deny-buttons"):
                yield action_button("Deny with reason (r)", "screen.answer('reason')", id="deny-reason")
                yield action_button("Deny (n)", "screen.answer('deny')", variant="error", id="deny")

    def on_mount(self) -> None:
        self.set_timer(ARMING_DELAY, self._arm)

    def _arm(self) -> None:
        self.armed = True

    def action_key(self, answer: str) -> None:
        """A letter key: answers only once the dialog is armed."""
        if self.armed:
            self.action_answer(answer)

    def action_answer(self, answer: str) -> None:
        """``once``, ``prefix``, ``session``, ``deny``, or ``reason`` (opens the reason field; Enter there denies)."""
        if answer == "once":
            self.dismiss(CommandDecision.once())
        elif answer == "prefix" and self.request.prefix:
            self.dismiss(CommandDecision.prefix())
        elif answer == "session":
            self.dismiss(CommandDecision.session())
        elif answer == "deny":
            self.dismiss(CommandDecision.deny())
        elif answer == "reason":
            self.add_class("-reason")
            self.query_one("#command-reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(CommandDecision.deny(event.value))
