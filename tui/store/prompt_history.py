"""Prompt history: what was typed in the prompt of one session, kept in its session directory.

``<data>/sessions/<id>/prompt_history.jsonl`` holds one JSON string per line, oldest first (prompts
and slash commands, as entered). A fork starts from its parent's history. The file is small and
append-only; past :data:`MAX_ENTRIES` * 2 lines it is rewritten with the newest :data:`MAX_ENTRIES`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from tui.base.atomic import write_atomic
from tui.base.nofollow import open_file, read_text
from tui.base.paths import DataDir
from tui.text.terminal_text import encodable

__all__ = ["HISTORY_FILE_NAME", "MAX_ENTRIES", "PromptHistory", "history_path"]

logger = logging.getLogger(__name__)

HISTORY_FILE_NAME = "prompt_history.jsonl"
MAX_ENTRIES = 500


def history_path(data_root: Path, session_id: str) -> Path:
    """Where the prompt history of ``session_id`` is kept."""
    return DataDir(data_root).session_dir(session_id) / HISTORY_FILE_NAME


def _read(path: Path) -> list[str]:
    import json  # here and below: the prompt (and so this module) is in the first frame, json is not

    try:
        lines = read_text(path).splitlines()  # a planted link is refused (logged below), never read
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        logger.warning("prompt history %s unreadable: %s", path, error)
        return []
    entries: list[str] = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash: the others are still good
        if isinstance(entry, str) and entry:
            entries.append(entry)
    return entries[-MAX_ENTRIES:]


class PromptHistory:
    """The entries of one session, oldest first; :meth:`add` appends to memory and to the file."""

    def __init__(self, path: Path | None = None, entries: list[str] | None = None) -> None:
        """``path=None``: kept in memory only (the session is not open yet)."""
        self.path = path
        self._entries = list(entries or [])
        self._lines_on_disk = len(self._entries)

    @classmethod
    def load(cls, path: Path, *, inherit_from: Path | None = None) -> PromptHistory:
        """The history in ``path``; a session without one starts from ``inherit_from`` (its parent's)."""
        entries = _read(path)
        if not entries and inherit_from is not None and not path.exists():
            inherited = cls(path, _read(inherit_from))
            inherited._lines_on_disk = 0  # nothing of it is in this session's file yet
            return inherited
        return cls(path, entries)

    @property
    def entries(self) -> list[str]:
        """Every entry, oldest first."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, text: str) -> None:
        """Record ``text`` (a repeat of the newest entry is not recorded twice; lone surrogates replaced)."""
        text = encodable(text)
        if not text.strip() or (self._entries and self._entries[-1] == text):
            return
        self._entries.append(text)
        del self._entries[:-MAX_ENTRIES]
        if self.path is not None:
            self._save(text)

    def _save(self, text: str) -> None:
        import json

        assert self.path is not None
        try:
            if self._lines_on_disk == 0 or self._lines_on_disk >= 2 * MAX_ENTRIES:
                self._rewrite()
            else:
                descriptor = open_file(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                with open(descriptor, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(text, ensure_ascii=False) + "\n")
                self._lines_on_disk += 1
        except OSError as error:  # the session directory went away: keep the entry in memory
            logger.warning("could not save the prompt history to %s: %s", self.path, error)

    def _rewrite(self) -> None:
        """The whole (trimmed) history, written to a temp file and renamed over the old one."""
        import json

        assert self.path is not None
        if not self.path.parent.is_dir():
            raise FileNotFoundError(f"no session directory {self.path.parent}")
        write_atomic(self.path, "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in self._entries))
        self._lines_on_disk = len(self._entries)
