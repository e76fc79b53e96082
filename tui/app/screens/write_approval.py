"""The dialog that asks before the agent changes a file: the tool, the path, the diff or preview, the answer.

Keyboard first: ``y`` or Enter allows once, ``a`` allows every write for the rest of this session, ``n`` or
Esc denies, ``r`` denies with a reason typed for the model (Enter sends it). Every button does the same on a
click. The dialog can open while the user is typing the next prompt, so for :data:`ARMING_DELAY` seconds
the letter keys and Enter do nothing (a stray ``a`` must not allow every write); Esc and clicks always work.
The diff is the model's text: it is shown through :func:`~tui.text.terminal_text.visible`, as plain content
(never markup), with added and removed lines coloured.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from tui.agent.write_approval import WriteDecision, WriteRequest
from tui.app.screens.confirm import ButtonRow, DialogScreen, action_button
from tui.text.terminal_text import visible

__all__ = ["WriteApprovalScreen", "diff_content"]

ARMING_DELAY = 0.4
"""Seconds after the dialog opens before its letter keys and Enter answer it."""

_LINE_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "$accent"), ("+", "$text-success"), ("-", "$text-error"))


def diff_content(body: str, *, is_diff: bool) -> Content:
    """``body`` as plain content, each diff line coloured by its first characters (``+``, ``-``, ``@@``)."""
    safe = visible(body)
    if not is_diff:
        return Content(safe)
    pieces: list[tuple[str, str] | str] = []
    for number, line in enumerate(safe.split("\n")):
        if number:
            pieces.append("\n")
        style = next((style for prefix, style in _LINE_STYLES if line.startswith(prefix)), "")
        pieces.append((line, style) if style else line)
    return Content.assemble(*pieces)


class WriteApprovalScreen(DialogScreen[WriteDecision]):
    """Asks about one :class:`WriteRequest`; dismisses with the user's :class:`WriteDecision`."""

    AUTO_FOCUS = "#approval-body"
    """The diff takes the keyboard (↑/↓ scroll it; Enter is this screen's allow-once, once armed); Tab reaches
    the buttons (Enter then presses the focused one)."""

    DEFAULT_CSS = """
    WriteApprovalScreen .dialog {
        width: 100;
        max-height: 90%;
    }
    WriteApprovalScreen #approval-summary {
        margin-top: 1;
        text-style: bold;
    }
    WriteApprovalScreen #approval-note {
        color: $text-warning;
    }
    WriteApprovalScreen #approval-body {
        height: auto;
        max-height: 24;
        margin-top: 1;
        border: round $panel;
        padding: 0 1;
    }
    WriteApprovalScreen #approval-reason {
        display: none;
        margin-top: 1;
    }
    WriteApprovalScreen.-reason #approval-reason {
        display: block;
    }
    WriteApprovalScreen .dialog--buttons Button {
        margin-left: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "key('once')", "Allow once", show=False),
        Binding("a", "key('session')", "Allow for this session", show=False),
        Binding("n", "key('deny')", "Deny", show=False),
        Binding("r", "key('reason')", "Deny with a reason", show=False),
        Binding("escape", "answer('deny')", "Deny", show=False),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    def __init__(self, request: WriteRequest) -> None:
        super().__init__()
        self.request = request
        self.armed = False
        """Whether the keys answer yet (see :data:`ARMING_DELAY`)."""

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(classes="dialog") as dialog:
            counter = f" ({request.position} of {request.total})" if request.total > 1 else ""
            dialog.border_title = Content(f"Allow {visible(request.tool_name)}?{counter}")
            dialog.border_subtitle = "y/⏎ once · a session · n/esc deny · r deny with reason"
            yield Static(Content(f"The agent wants to {visible(request.summary)}"), id="approval-summary")
            if request.note:
                yield Static(Content(visible(request.note)), id="approval-note")
            if request.body:
                with VerticalScroll(id="approval-body"):
                    yield Static(diff_content(request.body, is_diff=request.action not in ("create", "call")),
                                 id="approval-diff")
            yield Input(placeholder="why not? (the model reads it) — Enter denies, Esc denies without it",
                        id="approval-reason")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Deny (n)", "screen.answer('deny')", variant="error", id="deny")
                yield action_button("Deny with reason (r)", "screen.answer('reason')", id="deny-reason")
                yield action_button("Allow for this session (a)", "screen.answer('session')", id="allow-session")
                yield action_button("Allow once (y)", "screen.answer('once')", variant="primary", id="allow-once")

    def on_mount(self) -> None:
        self.set_timer(ARMING_DELAY, self._arm)

    def _arm(self) -> None:
        self.armed = True

    def action_key(self, answer: str) -> None:
        """A letter key: answers only once the dialog is armed (see :data:`ARMING_DELAY`)."""
        if self.armed:
            self.action_answer(answer)

    def action_answer(self, answer: str) -> None:
        """``once``, ``session``, ``deny``, or ``reason`` (opens the reason field; Enter there denies)."""
        if answer == "once":
            self.dismiss(WriteDecision.once())
        elif answer == "session":
            self.dismiss(WriteDecision.session())
        elif answer == "deny":
            self.dismiss(WriteDecision.deny())
        elif answer == "reason":
            self.add_class("-reason")
            self.query_one("#approval-reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(WriteDecision.deny(event.value))
