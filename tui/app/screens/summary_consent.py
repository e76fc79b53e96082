"""The question the pre-flight asks when automatic compaction is off and the next request would not fit the window:
summarize the older messages now, or only evict (old outputs become pointers to their saved copies, and the oldest
messages are dropped behind a marker; every message stays on disk either way).

It opens during a turn, maybe while the user types: like the approval dialogs, its keys answer only
:data:`~tui.app.screens.approval_dialog.ARMING_DELAY` after it is drawn (the keys before go to the prompt); a click
always answers. ``s`` summarizes, ``e`` or Esc evicts only (nothing is sent over the window either way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Static

from tui.app.formatting import human_tokens
from tui.app.screens.approval_dialog import AnswerKey, ApprovalDialog

if TYPE_CHECKING:
    from textual.app import ComposeResult

__all__ = ["SummaryConsentScreen"]


class SummaryConsentScreen(ApprovalDialog[bool]):
    """Dismisses ``True`` (summarize now) or ``False`` (evict only)."""

    DEFAULT_CSS = """
    SummaryConsentScreen .dialog { width: 76; }
    SummaryConsentScreen .dialog--buttons { height: auto; }
    """

    ANSWER_KEYS = (
        AnswerKey("s", "summarize", "Summarize the older messages"),
        AnswerKey("e,escape", "evict", "Evict only"),
    )

    def __init__(self, tokens: int, limit: int) -> None:
        """``tokens``: what the next request measures; ``limit``: the most a request may carry."""
        super().__init__()
        self.tokens = tokens
        self.limit = limit

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "The next request does not fit"
            dialog.border_subtitle = "s summarize · e/esc evict only"
            yield Static(Content.assemble(
                f"The next request measures {human_tokens(self.tokens)} tokens; a request may carry "
                f"{human_tokens(self.limit)}. Automatic compaction is off for this session (/context), so "
                "nothing was compacted.\n\n",
                ("Summarize", "bold"), " replaces the older messages with a summary (one model request). ",
                ("Evict only", "bold"), " turns old tool outputs into pointers to their saved copies and drops the "
                "oldest messages behind a marker. Nothing goes over the window either way, and every message stays "
                "on disk."), id="consent-text", classes="dialog--message")
            with Horizontal(classes="dialog--buttons"):
                yield self.answer_button("Evict only (e)", "evict", id="evict")
                yield self.answer_button("Summarize (s)", "summarize", variant="primary", id="summarize")

    def decide(self, answer: str) -> bool | None:
        return {"summarize": True, "evict": False}.get(answer)
