"""The dialog that asks before the agent changes a file: the tool, the path, the diff or preview, the answer.

Keyboard first: ``y`` or Enter allows once, ``a`` allows every write for the rest of this session, ``n`` or
Esc denies, ``r`` denies with a reason typed for the model (Enter sends it). Every button does the same on a
click. The diff is the model's text: it is shown through :func:`~tui.terminal_text.visible`, as plain
content (never markup), with added and removed lines coloured.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from tui.agent.write_approval import WriteDecision, WriteRequest
from tui.app.screens.confirm import DialogScreen, action_button
from tui.terminal_text import visible

__all__ = ["WriteApprovalScreen", "diff_content"]

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
        Binding("y", "allow_once", "Allow once", show=False),
        Binding("a", "allow_session", "Allow for this session", show=False),
        Binding("n,escape", "deny", "Deny", show=False),
        Binding("r", "ask_reason", "Deny with a reason", show=False),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    def __init__(self, request: WriteRequest) -> None:
        super().__init__()
        self.request = request

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
                    yield Static(diff_content(request.body, is_diff=request.action != "create"), id="approval-diff")
            yield Input(placeholder="why not? (the model reads it) — Enter denies, Esc denies without it",
                        id="approval-reason")
            with Horizontal(classes="dialog--buttons"):
                yield action_button("Deny (n)", "screen.deny", variant="error", id="deny")
                yield action_button("Deny with reason (r)", "screen.ask_reason", id="deny-reason")
                yield action_button("Allow for this session (a)", "screen.allow_session", id="allow-session")
                yield action_button("Allow once (y)", "screen.allow_once", variant="primary", id="allow-once")

    def on_mount(self) -> None:
        self.query_one("#allow-once").focus()

    def action_allow_once(self) -> None:
        self.dismiss(WriteDecision.once())

    def action_allow_session(self) -> None:
        self.dismiss(WriteDecision.session())

    def action_deny(self) -> None:
        self.dismiss(WriteDecision.deny())

    def action_ask_reason(self) -> None:
        self.add_class("-reason")
        self.query_one("#approval-reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(WriteDecision.deny(event.value))
