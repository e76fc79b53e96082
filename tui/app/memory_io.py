"""Reading and writing MEMORY.md for the editor panel (no Textual here)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tui.base.nofollow import open_file, read_text

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "MAX_EDIT_BYTES",
    "PREVIEW_BYTES",
    "file_size",
    "read_preview",
    "read_text_or_none",
    "with_final_newline",
]

MAX_EDIT_BYTES = 256 * 1024
"""A MEMORY.md larger than this opens read-only: an editor with megabytes in it (highlighted and
wrapped) stops the whole app from responding, quitting included."""
PREVIEW_BYTES = 64 * 1024
"""How much of a file too large to edit is shown."""


def read_text_or_none(path: Path) -> str | None:
    """The file's text, or ``None`` when it does not exist (other errors propagate: a planted link is a
    ``LinkRefusedError`` naming it)."""
    try:
        return read_text(path)
    except FileNotFoundError:
        return None


def file_size(path: Path) -> int | None:
    """The file's size in bytes, or ``None`` when it does not exist."""
    try:
        return os.lstat(path).st_size
    except FileNotFoundError:
        return None


def read_preview(path: Path, limit: int = PREVIEW_BYTES) -> str:
    """The first ``limit`` bytes of ``path`` as text (a character cut in half is replaced)."""
    with os.fdopen(open_file(path, os.O_RDONLY), "rb") as handle:
        return handle.read(limit).decode("utf-8", errors="replace")


def with_final_newline(text: str) -> str:
    """``text`` ending in a newline, so a line appended from outside (``echo >> MEMORY.md``) starts on its own
    line; an empty file stays empty."""
    return text if not text or text.endswith("\n") else text + "\n"
