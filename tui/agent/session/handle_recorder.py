"""How a turn's messages reach the store, and what a failure there (or an overflow) tells the user."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic_ai.messages import ModelMessage

from tui.chain.estimate import text_tokens
from tui.store import SessionHandle

MEMORY_SHARE_WORTH_NAMING = 0.25
"""An overflow error names MEMORY.md when what it puts into every request is at least this share of
the window."""


class HistoryWriteError(Exception):
    """messages.json could not be appended to (a full disk, a read-only file system); one line for the user."""


class HandleRecorder:
    """Adapts the store's session handle to the chain's recorder protocol; ``on_recorded(first, messages)``
    hears of every append (the search index; the store itself knows nothing of it)."""

    def __init__(self, handle: SessionHandle,
                 on_recorded: Callable[[int, Sequence[ModelMessage]], None] | None = None) -> None:
        self._handle = handle
        self._on_recorded = on_recorded

    def append_messages(self, messages: Sequence[ModelMessage]) -> int:
        start = self._handle.meta.message_count
        try:
            self._handle.append_messages(messages)
        except OSError as error:  # nothing was appended: the ledger appends these again next time
            raise HistoryWriteError(
                f"cannot save the session: {error.strerror or error} ({self._handle.messages.path}); the turn "
                "stopped — free some space: what is not saved yet is kept in memory and saved with the next turn"
            ) from error
        if self._on_recorded is not None:
            self._on_recorded(start, messages)
        return start


def memory_overflow_note(memory_instructions: str, memory_path: Path, window: int) -> str:
    """What to add to a window-overflow error when MEMORY.md takes a large share of it ("" otherwise)."""
    tokens = text_tokens(memory_instructions)
    if tokens < MEMORY_SHARE_WORTH_NAMING * window:
        return ""
    return (f" — MEMORY.md ({memory_path}) puts about {tokens:,} tokens into every request: shorten it (the "
            "agent only sees its first lines anyway)")
