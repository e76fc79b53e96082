"""An open session: its files, its lock, and the metadata kept in step with the history."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from pydantic_ai.messages import ModelMessage

from tui.store.cost_totals import CostTotals
from tui.store.event_log import EventLog
from tui.store.lock import SessionLock
from tui.store.messages_file import MessagesFile
from tui.store.meta import UNTITLED, SessionMeta, UsageSnapshot, title_from


class SessionHandle:
    """One session opened for writing (holding its lock) or read-only."""

    def __init__(self, directory: Path, meta: SessionMeta, *, lock: SessionLock | None) -> None:
        self.directory = directory
        self.meta = meta
        self.messages = MessagesFile(directory / "messages.json")
        self.events = EventLog(directory / "events.jsonl")
        self._lock = lock

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def read_only(self) -> bool:
        return self._lock is None

    @property
    def meta_path(self) -> Path:
        return self.directory / "session.json"

    def _save_meta(self) -> None:
        self.meta.updated = time.time()
        self.meta.write(self.meta_path)

    def append_messages(self, messages: Sequence[ModelMessage]) -> int:
        """Append to messages.json and keep session.json in step; returns the first new index."""
        if self.read_only:
            raise PermissionError(f"session {self.id} is open read-only")
        first = self.messages.append(messages)
        self.meta.message_count = first + len(messages)
        if self.meta.title == UNTITLED:
            self.meta.title = title_from(list(messages)) or UNTITLED
        self._save_meta()
        return first

    def record_usage(self, tokens: int, window: int, window_source: str) -> None:
        if self.read_only:
            return
        self.meta.last_usage = UsageSnapshot(tokens, window, window_source)
        self._save_meta()

    def record_compression(self) -> None:
        if self.read_only:
            return
        self.meta.compressions += 1
        self._save_meta()

    def record_cost(self, totals: CostTotals) -> None:
        """Keep the session's running cost in session.json."""
        if self.read_only:
            return
        self.meta.cost = totals
        self._save_meta()

    def rename(self, title: str) -> None:
        self.meta.title = " ".join(title.split()) or UNTITLED
        self._save_meta()

    def close(self) -> None:
        """Release the lock; safe to call twice."""
        if self._lock is not None:
            self._lock.release()
