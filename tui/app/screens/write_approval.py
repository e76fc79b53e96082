"""The dialog that asks before the agent changes a file: the tool, the path, the diff or preview, the answer.

Keyboard first: ``y`` or Enter allows once, Ctrl+A allows every write for the rest of this session (for an MCP
tool: every tool of that server), ``n`` or Esc denies, ``r`` denies with a reason typed for the model (Enter
sends it). Every button does the same on a click. The dialog can open while the user is typing the next prompt,
so keys answer only :data:`~tui.app.screens.approval_dialog.ARMING_DELAY` after it is drawn (the keys before go
to the prompt), and the broadest answer takes Ctrl+A, never a letter; clicks always work.
The diff is the model's text: it is shown through :func:`~tui.text.terminal_text.visible`, as plain content
(never markup), with added and removed lines coloured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.agent.approval.writes import WriteDecision, WriteRequest
from tui.app.screens.approval_dialog import REASON, SESSION_KEY, SESSION_KEY_SHOWN, AnswerKey, ApprovalDialog
from tui.app.screens.basic_dialogs import ButtonRow
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from textual.app import ComposeResult

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


def session_label(request: WriteRequest) -> str:
    """The broadest answer's button: every write, or every tool of the MCP server the call goes to."""
    if request.action == "call" and request.server:
        return f"Allow all {visible(request.server)} tools ({SESSION_KEY_SHOWN})"
    return f"Allow all writes ({SESSION_KEY_SHOWN})"


class WriteApprovalScreen(ApprovalDialog[WriteDecision]):
    """Asks about one :class:`WriteRequest`; dismisses with the user's :class:`WriteDecision`."""

    AUTO_FOCUS = "#approval-body"
    """The diff takes the keyboard (↑/↓ scroll it; Enter is this screen's allow-once, once armed); Tab reaches
    the buttons (Enter then presses the focused one)."""

    DEFAULT_CSS = """
    WriteApprovalScreen .dialog {
        width: 100;
    }
    WriteApprovalScreen #approval-summary {
        margin-top: 1;
        text-style: bold;
    }
    WriteApprovalScreen #approval-note {
        color: $text-warning;
    }
    WriteApprovalScreen #approval-body {
        max-height: 24;
    }
    """

    FITTED_BODY = "#approval-body"

    ANSWER_KEYS = (
        AnswerKey("y,enter", "once", "Allow once"),
        AnswerKey(SESSION_KEY, "session", "Allow for this session"),
        AnswerKey("n,escape", "deny", "Deny"),
        AnswerKey("r", REASON, "Deny with a reason"),
    )

    def __init__(self, request: WriteRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(classes="dialog") as dialog:
            counter = f" ({request.position} of {request.total})" if request.total > 1 else ""
            dialog.border_title = Content(f"Allow {visible(request.tool_name)}?{counter}")
            dialog.border_subtitle = f"y/⏎ once · {SESSION_KEY_SHOWN} session · n/esc deny · r deny with reason"
            if request.subagent:  # one of the session's subagents asks, not the agent itself
                yield Static(Content.styled(f"asked by {visible(request.subagent)}", "bold $accent"),
                             id="approval-subagent")
            yield Static(Content(f"The agent wants to {visible(request.summary)}"), id="approval-summary")
            if request.note:
                yield Static(Content(visible(request.note)), id="approval-note")
            if request.body:
                with VerticalScroll(id="approval-body", classes="approval--framed"):
                    yield Static(diff_content(request.body, is_diff=request.action not in ("create", "call")),
                                 id="approval-diff")
            yield self.reason_field("approval-reason")
            with ButtonRow(classes="dialog--buttons"):
                yield self.answer_button("Deny (n)", "deny", variant="error", id="deny")
                yield self.answer_button("Deny with reason (r)", REASON, id="deny-reason")
                yield self.answer_button(session_label(request), "session", id="allow-session")
                yield self.answer_button("Allow once (y)", "once", variant="primary", id="allow-once")

    def decide(self, answer: str) -> WriteDecision | None:
        """``once``, ``session`` or ``deny``."""
        decisions = {"once": WriteDecision.once, "session": WriteDecision.session, "deny": WriteDecision.deny}
        return decisions[answer]() if answer in decisions else None

    def decline_with(self, reason: str) -> WriteDecision:
        return WriteDecision.deny(reason)
