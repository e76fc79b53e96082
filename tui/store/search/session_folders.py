"""The session folders as the search index finds them on disk: stat calls only, whether one changed since it was
indexed, and its title and parent read from session.json."""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from tui.store.meta import ParentRef, read_meta
from tui.store.search.database import IndexedSession

logger = logging.getLogger(__name__)

__all__ = ["DiskSession", "changed_since_indexed", "list_disk_sessions", "title_and_parent"]


@dataclass(frozen=True)
class DiskSession:
    """A session directory as found on disk (only stat calls, no reading)."""

    id: str
    path: str
    """The directory (a string: a listing of 1,000 sessions should not build 3,000 Path objects)."""
    size: int
    mtime_ns: int
    meta_mtime_ns: int

    @property
    def directory(self) -> Path:
        return Path(self.path)


def list_disk_sessions(root: Path, only: Collection[str] | None = None) -> dict[str, DiskSession]:
    """Session directories under ``root`` holding a messages.json (stat calls only). Raises ``OSError`` when
    ``root`` exists but cannot be listed (so nothing is dropped from the index for it)."""
    found: dict[str, DiskSession] = {}
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return found
    for entry in entries:
        if only is not None and entry.name not in only:
            continue
        try:
            history = os.stat(os.path.join(entry.path, "messages.json"))
        except OSError:
            continue
        try:
            meta_mtime = os.stat(os.path.join(entry.path, "session.json")).st_mtime_ns
        except OSError:
            meta_mtime = 0
        found[entry.name] = DiskSession(entry.name, entry.path, history.st_size, history.st_mtime_ns, meta_mtime)
    return found


def changed_since_indexed(found: DiskSession, row: IndexedSession | None) -> bool:
    """The session's files differ from what the index recorded of them (or it is not indexed)."""
    return (row is None or row.size != found.size or row.mtime_ns != found.mtime_ns
            or row.meta_mtime_ns != found.meta_mtime_ns)


def title_and_parent(found: DiskSession) -> tuple[str, ParentRef | None]:
    """The title and parent session.json gives (``""``, ``None`` when it is missing or unreadable)."""
    meta_path = found.directory / "session.json"
    if found.meta_mtime_ns:
        try:
            meta = read_meta(meta_path, found.id)
            return meta.title, meta.parent
        except (ValueError, TypeError, KeyError, OSError) as error:
            logger.debug("search index: unreadable %s: %s", meta_path, error)
    return "", None
