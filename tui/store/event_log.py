"""``events.jsonl``: one line per chain event, appended."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


class EventLog:
    """Appends and reads a session's chain events."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skipped_lines = 0

    def append(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")

    def read(self) -> list[dict[str, Any]]:
        """Every readable record, oldest first; unreadable lines are counted in ``skipped_lines``."""
        self.skipped_lines = 0
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
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
