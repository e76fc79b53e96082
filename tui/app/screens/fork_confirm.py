"""Forking at a chat message is deliberate: a confirmation that names the message first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from tui.app.screens.basic_dialogs import ConfirmModal
from tui.text.wording import plural

if TYPE_CHECKING:
    from tui.agent.runtime_api import SessionRuntimeAPI

__all__ = ["fork_confirmation", "whole_fork_confirmation"]

QUOTE_LIMIT = 80


def fork_confirmation(runtime: SessionRuntimeAPI, upto: int) -> ConfirmModal:
    """"Fork here?" for a fork keeping messages ``[0:upto]``, quoting message ``upto`` (its first line)."""
    from tui.app.widgets.history_blocks import original_lines  # pydantic-ai: not needed for the first frame

    lines = original_lines(runtime.load_history(upto - 1, upto))
    label, text = lines[0] if lines else ("message", "")
    quoted = " ".join(text.split())
    quoted = quoted if len(quoted) <= QUOTE_LIMIT else quoted[: QUOTE_LIMIT - 1] + "…"
    question = Content.assemble(
        "Fork this session at message ", (f"{upto}", "bold"), f" of {runtime.history_count()}:\n",
        (f"{label}  ", "bold $accent"), (quoted, "italic"),
        "\n\nA new session keeps this message and everything before it; this session stays as it is.")
    return ConfirmModal("Fork here?", question, confirm_label="Fork")


def whole_fork_confirmation(runtime: SessionRuntimeAPI) -> ConfirmModal:
    """"Fork the whole session?" — Ctrl+F or /fork with no message selected (it forked without asking)."""
    count = runtime.history_count()
    question = Content.assemble(
        "Fork this whole session (", (plural(count, "message"), "bold"), ") into a new one?\n\n",
        "To fork at a message instead, select it (click it) and press Ctrl+F. This session stays as it is.")
    return ConfirmModal("Fork the whole session?", question, confirm_label="Fork")
