"""What the session picker dismisses with: the session to open or fork, or a new one, and the content hit to show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["PickerResult", "matched_text"]


@dataclass(frozen=True)
class PickerResult:
    """What the user chose: open or fork ``session_id`` (forks whole, or ``[0:upto]``), or a new session;
    ``message``: the content hit to scroll to once the session is open."""

    action: Literal["open", "fork", "new"]
    session_id: str | None
    upto: int | None = None
    message: int | None = None
    saved_output: str | None = None
    """For a hit inside a saved (evicted) output: its file, opened at the match (the chat shows only a preview)."""
    match: str | None = None
    """The text the hit matched (as the search highlighted it), to find in the saved output."""


def matched_text(snippet: str) -> str | None:
    """The first highlighted stretch of a content hit's snippet (what the search matched), if any."""
    from tui.store.search.terms import HIGHLIGHT_END, HIGHLIGHT_START

    start = snippet.find(HIGHLIGHT_START)
    end = snippet.find(HIGHLIGHT_END, start + 1)
    return snippet[start + 1:end] or None if 0 <= start < end else None
