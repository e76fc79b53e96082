"""An open session: its files, its lock, and the metadata kept in step with the history."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic_ai.messages import ModelMessage

from tui.store.checkpoints_file import CHECKPOINTS_FILE_NAME, CheckpointsFile
from tui.store.cost_totals import CostTotals
from tui.store.events_file import EventLog
from tui.store.lock import SessionLock
from tui.store.messages_file import MessagesFile
from tui.store.meta import UNTITLED, SessionMeta, UsageSnapshot, title_from
from tui.store.store_errors import StorageError
from tui.store.task_state import TaskStateFile

logger = logging.getLogger(__name__)


class SessionHandle:
    """One session opened for writing (holding its lock) or read-only."""

    def __init__(self, directory: Path, meta: SessionMeta, *, lock: SessionLock | None) -> None:
        self.directory = directory
        self.meta = meta
        self.messages = MessagesFile(directory / "messages.json")
        self.events = EventLog(directory / "events.jsonl")
        self.task_state = TaskStateFile.of(directory, read_only=lock is None)
        """todos.json: the agent's todo list and the user's standing instructions (read on first use)."""
        self.checkpoints = CheckpointsFile(directory / CHECKPOINTS_FILE_NAME)
        """The session's restore points (``/rewind``)."""
        self._lock = lock
        self._meta_behind = False
        """session.json lags behind :attr:`meta` (written by :meth:`flush_meta`: at the end of a turn, a compaction,
        the close)."""
        self.warnings: list[str] = []
        """What the user must hear about this session's files, found when it was opened."""

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def read_only(self) -> bool:
        return self._lock is None

    @property
    def meta_path(self) -> Path:
        return self.directory / "session.json"

    def _save_meta(self, *, used: bool = True) -> None:
        """``used``: the write records use of the session (its "updated", which ``--continue`` and the picker's
        order follow); a rename is not use."""
        if used:
            self.meta.updated = time.time()
        self.meta.write(self.meta_path)
        self._meta_behind = False

    def save_meta_or_log(self) -> None:
        """session.json is a summary of the history (recounted on open): failing to write it (a full disk)
        must not undo or repeat an append that reached messages.json, so it is logged, not raised."""
        try:
            self._save_meta()
        except OSError as error:
            logger.warning("could not update %s: %s", self.meta_path, error)

    def append_messages(self, messages: Sequence[ModelMessage]) -> int:
        """Append to messages.json; returns the first new index.

        session.json follows at the next :meth:`flush_meta` (the end of the turn), not at every append: it is a
        summary that an open recounts from messages.json. The append that gives the session its title (its
        first) writes it at once, so the picker never lists a session with messages as untitled.
        Raises ``OSError`` (e.g. a full disk) only when nothing was appended."""
        if self.read_only:
            raise PermissionError(f"session {self.id} is open read-only")
        first = self.messages.append(messages)
        self.meta.message_count = first + len(messages)
        self._meta_behind = True
        if self.meta.title == UNTITLED:
            self.meta.title = title_from(list(messages)) or UNTITLED
            self.save_meta_or_log()
        return first

    def flush_meta(self) -> None:
        """Write session.json if it lags behind (appends, usage, cost, compactions since the last write)."""
        if self._meta_behind and not self.read_only:
            self.save_meta_or_log()

    def take_notices(self) -> list[str]:
        """Damage found in messages.json since the last call (after the open), for the user."""
        notices, self.messages.notices = self.messages.notices, []
        return notices

    def record_usage(self, tokens: int, window: int, window_source: str) -> None:
        if self.read_only:
            return
        # Written by the next flush (the end of the turn, or the close), with the messages they describe.
        self.meta.last_usage = UsageSnapshot(tokens, window, window_source)
        self._meta_behind = True

    def record_summary_backoff(self, tokens: int | None) -> None:
        """No automatic summary until the context reaches ``tokens`` (``None``: no wait), kept in session.json
        (written with the next flush) so the next process waits too."""
        if self.read_only or self.meta.summary_retry_from == tokens:
            return
        self.meta.summary_retry_from = tokens
        self._meta_behind = True

    def record_compaction_controls(self, threshold: float | None, auto: bool | None) -> None:
        """The compaction controls the user set for this session (``None``: the config's), written at once: a
        ``--resume`` or ``run --continue`` of this session uses them too."""
        if self.read_only or (self.meta.compaction_threshold, self.meta.auto_compact) == (threshold, auto):
            return
        self.meta.compaction_threshold, self.meta.auto_compact = threshold, auto
        self._meta_behind = True
        self.flush_meta()

    def record_compression(self) -> None:
        if self.read_only:
            return
        self.meta.compressions += 1
        self._meta_behind = True

    def record_cost(self, totals: CostTotals) -> None:
        """Keep the session's running cost in session.json (written by the next flush, or at close)."""
        if self.read_only:
            return
        self.meta.cost = totals
        self._meta_behind = True

    def record_restore_point(self) -> None:
        """One more prompt with a restore point (session.json, at the next flush)."""
        if not self.read_only:
            self.meta.restore_points += 1
            self._meta_behind = True

    def record_restore(self) -> None:
        """One more rewind that restored files (session.json, at the next flush)."""
        if not self.read_only:
            self.meta.restores += 1
            self._meta_behind = True

    def rename(self, title: str) -> None:
        """A new title; "updated" stays when the session was last used (appends not yet written are use)."""
        self.meta.title = " ".join(title.split()) or UNTITLED
        try:
            self._save_meta(used=self._meta_behind)
        except OSError as error:
            raise StorageError.of(f"rename session {self.id}", error) from None

    def close(self) -> None:
        """Write what session.json still lacks, close events.jsonl, release the lock; safe to call twice."""
        self.flush_meta()
        self.events.close()
        if self._lock is not None:
            self._lock.release()
