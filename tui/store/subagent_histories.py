"""Where a session's subagents keep their histories: ``sessions/<id>/subagents/<n>/``.

Each subagent the ``task`` tool runs gets the next number ``n`` (1, 2, …) and a folder of its own holding its whole
history in ``messages.json`` (appended in place, one message a line, exactly like the session's: see
:mod:`tui.store.messages_file`) and its own chain's events in ``events.jsonl``. No link is followed on the way
(:mod:`tui.base.nofollow`). pydantic-ai is imported only when a folder is made (``deep-tui search`` lists them
without it).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui.base.nofollow import open_dir
from tui.store.events_file import EventLog

if TYPE_CHECKING:  # pydantic-ai: loaded when a subagent starts, not by the search that lists subagents
    from tui.store.messages_file import MessagesFile

SUBAGENTS_DIR_NAME = "subagents"


@dataclass
class SubagentHistory:
    """One subagent's files."""

    number: int
    directory: Path
    messages: MessagesFile
    events: EventLog

    def close(self) -> None:
        self.events.close()


def subagent_numbers(session_dir: Path) -> list[int]:
    """The numbers of the subagents recorded under ``session_dir``, in order (none when there are none)."""
    root = session_dir / SUBAGENTS_DIR_NAME
    try:
        fd = open_dir(root)
    except (FileNotFoundError, NotADirectoryError):
        return []
    try:
        with os.scandir(fd) as entries:
            numbers = [int(entry.name) for entry in entries
                       if entry.name.isdigit() and entry.is_dir(follow_symlinks=False)]
    finally:
        os.close(fd)
    return sorted(numbers)


def subagent_history_file(session_dir: Path, number: int) -> Path:
    """Where subagent ``number``'s ``messages.json`` is."""
    return session_dir / SUBAGENTS_DIR_NAME / str(number) / "messages.json"


class SubagentHistories:
    """Hands out the next subagent folder of one open session (thread-safe: subagents start concurrently)."""

    def __init__(self, session_dir: Path) -> None:
        self.session_dir = session_dir
        self._next: int | None = None
        self._lock = threading.Lock()

    def create(self) -> SubagentHistory:
        """A new, empty folder for the next subagent. Raises ``OSError`` when it cannot be made (a full disk, a
        planted link)."""
        from tui.store.messages_file import MessagesFile

        with self._lock:
            if self._next is None:
                self._next = max(subagent_numbers(self.session_dir), default=0) + 1
            root = self.session_dir / SUBAGENTS_DIR_NAME
            fd = open_dir(root, create=True)  # no link followed on the way
            try:
                while True:
                    number, self._next = self._next, self._next + 1
                    try:
                        os.mkdir(str(number), dir_fd=fd)  # a planted entry of that name makes this fail
                    except FileExistsError:
                        continue
                    directory = root / str(number)
                    return SubagentHistory(number, directory, MessagesFile(directory / "messages.json"),
                                           EventLog(directory / "events.jsonl"))
            finally:
                os.close(fd)
