"""The dialog that asks before the agent runs a shell command: the command, where and how it runs, the answer.

Keyboard first: ``y`` or Enter allows once, ``p`` allows every command with the same prefix for this session
(offered only for a simple command: never one chaining others with ``;``, ``&&``, ``|``, ``$( )``…), Ctrl+A
allows every command for this session (a deliberate key: never a letter of a sentence), ``n`` or Esc denies,
``r`` denies with a reason typed for the model (Enter sends it). Every button does the same on a click. As in
every approval dialog, keys answer only :data:`~tui.app.screens.approval_dialog.ARMING_DELAY` after it is drawn
(the keys before go to the prompt); clicks always work. The buttons read as in the write dialog: deny first,
allow last. The command is the model's text: shown through :func:`~tui.text.terminal_text.visible`, as plain
content, never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.agent.approval.commands import CommandDecision, CommandRequest
from tui.app.screens.approval_dialog import REASON, SESSION_KEY, SESSION_KEY_SHOWN, AnswerKey, ApprovalDialog
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from textual.app import ComposeResult

__all__ = ["CommandApprovalScreen"]


def _clip(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


class CommandApprovalScreen(ApprovalDialog[CommandDecision]):
    """Asks about one :class:`CommandRequest`; dismisses with the user's :class:`CommandDecision`."""

    AUTO_FOCUS = "#command-body"

    DEFAULT_CSS = """
    CommandApprovalScreen .dialog {
        width: 90;
    }
    CommandApprovalScreen #command-where {
        margin-top: 1;
        color: $text-muted;
    }
    CommandApprovalScreen #command-body {
        max-height: 10;
    }
    CommandApprovalScreen .dialog--buttons {
        height: auto;
        margin-top: 0;
    }
    """

    FITTED_BODY = "#command-body"

    ANSWER_KEYS = (
        AnswerKey("y,enter", "once", "Allow once"),
        AnswerKey("p", "prefix", "Allow this prefix for the session"),
        AnswerKey(SESSION_KEY, "session", "Allow all commands for the session"),
        AnswerKey("n,escape", "deny", "Deny"),
        AnswerKey("r", REASON, "Deny with a reason"),
    )

    def __init__(self, request: CommandRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        prefix = visible(request.prefix) if request.prefix else None
        with Vertical(classes="dialog") as dialog:
            counter = f" ({request.position} of {request.total})" if request.total > 1 else ""
            dialog.border_title = Content(f"Run a shell command?{counter}")
            dialog.border_subtitle = ("y/⏎ once · " + ("p prefix · " if prefix else "")
                                      + f"{SESSION_KEY_SHOWN} all · n/esc deny · r reason")
            if request.subagent:  # one of the session's subagents asks, not the agent itself
                yield Static(Content.styled(f"asked by {visible(request.subagent)}", "bold $accent"),
                             id="command-subagent")
            with VerticalScroll(id="command-body", classes="approval--framed"):
                yield Static(Content(visible(request.command)), id="command-text")
            where = f"in {visible(request.workdir)} · timeout {request.timeout:g} s"
            if request.sandbox:
                where += f" · {visible(request.sandbox)}"
            yield Static(Content(where), id="command-where")
            yield self.reason_field("command-reason")
            with Horizontal(classes="dialog--buttons", id="deny-buttons"):
                yield self.answer_button("Deny (n)", "deny", variant="error", id="deny")
                yield self.answer_button("Deny with reason (r)", REASON, id="deny-reason")
            if prefix:
                with Horizontal(classes="dialog--buttons", id="prefix-buttons"):
                    yield self.answer_button(f"Allow {_clip(prefix)} … (p)", "prefix", id="allow-prefix")
            with Horizontal(classes="dialog--buttons", id="allow-buttons"):
                yield self.answer_button(f"Allow all commands ({SESSION_KEY_SHOWN})", "session", id="allow-session")
                yield self.answer_button("Allow once (y)", "once", variant="primary", id="allow-once")

    def decide(self, answer: str) -> CommandDecision | None:
        """``once``, ``prefix`` (only for a command that has one), ``session`` or ``deny``."""
        decisions = {"once": CommandDecision.once, "session": CommandDecision.session, "deny": CommandDecision.deny}
        if self.request.prefix:
            decisions["prefix"] = CommandDecision.prefix
        return decisions[answer]() if answer in decisions else None

    def decline_with(self, reason: str) -> CommandDecision:
        return CommandDecision.deny(reason)
