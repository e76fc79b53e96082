"""``events.jsonl``: one line per chain event, appended."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, TextIO

from tui.base.nofollow import open_file, read_text
from tui.base.redaction import redact

logger = logging.getLogger(__name__)


class EventLog:
    """Appends and reads a session's chain events."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skipped_lines = 0
        self._file: TextIO | None = None

    def append(self, record: dict[str, Any]) -> None:
        """Add one line, written through at once (the file stays open for the next one until :meth:`close`)."""
        line = redact(json.dumps(record, ensure_ascii=False)) + "\n"  # a summarizer's error may echo a key
        if self._file is None:
            descriptor = open_file(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)  # a planted link is refused
            self._file = open(descriptor, "a", encoding="utf-8")  # noqa: SIM115 - kept open until close()
        try:
            self._file.write(line)
            self._file.flush()
        except OSError:
            self.close()  # the next append opens the file again
            raise

    def close(self) -> None:
        """Close the file kept open for appending (safe to call twice)."""
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as error:  # every line was flushed when written; only the close itself failed
                logger.warning("closing %s: %s", self.path, error)

    def read(self) -> list[dict[str, Any]]:
        """Every readable record, oldest first; unreadable lines are counted in ``skipped_lines``."""
        self.skipped_lines = 0
        try:
            text = read_text(self.path, errors="replace")
        except FileNotFoundError:
            return []
        records: list[dict[str, Any]] = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                self.skipped_lines += 1
                continue
            if isinstance(record, dict):
                records.append(record)
            else:
                self.skipped_lines += 1
        if self.skipped_lines:
            logger.warning("%s: skipped %d unreadable lines", self.path, self.skipped_lines)
        return records
