"""Reading a session's history for the search, never rewriting it.

deep-tui's own ``messages.json`` is read line by line (only the wanted messages are parsed); a
history in another layout — a pydantic-deep session adopted as it is, one indented JSON array — is
parsed whole in memory, and converted only when the session itself is opened (``SessionStore``).
No Textual here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tui.base.nofollow import open_file
from tui.store.store_errors import CorruptSessionError

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

_DEEP_TUI_HEAD = b'[\n{"parts":['
"""How deep-tui's messages.json starts (``messages_layout.RECORD_START`` after the bracket)."""


def load_history_from(path: Path, start: int, stop: int | None = None) -> tuple[list[ModelMessage], int]:
    """Messages ``[start:stop]`` of a history file and its total count, never rewriting the file.

    deep-tui's layout is read line by line (only the wanted lines are parsed); another layout
    (a pydantic-deep export: one indented JSON array) is parsed whole in memory — it is converted
    only when the session itself is opened.
    """
    from tui.store.messages_file import MessagesFile, read_foreign  # pydantic-ai: only when reading histories

    try:
        with os.fdopen(open_file(path, os.O_RDONLY), "rb") as handle:  # a planted link is refused
            head = handle.read(len(_DEEP_TUI_HEAD))
            foreign = None if head == _DEEP_TUI_HEAD else read_foreign(head + handle.read())
    except OSError as error:
        raise CorruptSessionError(f"cannot read {path}: {error.strerror or error}") from None
    if foreign is not None:
        return foreign[start:stop], len(foreign)
    history = MessagesFile(path, convert_foreign=False)
    count = history.count()
    return history.load_range(start, count if stop is None else stop), count
