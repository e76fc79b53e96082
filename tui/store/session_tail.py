"""The last messages of a session, read from the raw bytes of ``messages.json`` without pydantic-ai.

Opening a session for real loads pydantic-ai (a second or two); the app draws this tail first, so
``deep-tui --resume ID`` shows where the conversation stopped as fast as its first frame. The file is
framed one message per line (:mod:`tui.store.messages_layout`), so the last records are found by
reading backwards from the end. Nothing here raises on bad bytes: a line that is not a whole message
(a torn tail, damage, another program's layout) is skipped, and what cannot be read at all gives an
empty tail — the real opening reports the damage.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.base.nofollow import open_file, read_bytes
from tui.base.paths import DataDir
from tui.store.session_ids import list_session_ids, resolve_prefix
from tui.store.store_errors import StoreError

logger = logging.getLogger(__name__)

CHUNK_BYTES = 64 * 1024
BYTE_BUDGET = 8 * 1024 * 1024
"""Read at most this much from the end: a tail made of a few huge tool outputs is cut short, not slow."""


Record = dict[str, Any]
"""One message as pydantic-ai dumps it to JSON (``kind``, ``parts``, …), unvalidated."""


@dataclass(frozen=True)
class SessionTail:
    """The newest ``records`` of one session, and where they sit in its history."""

    session_id: str
    title: str | None
    records: list[Record] = field(default_factory=list)
    first_index: int | None = None
    """The history index of ``records[0]`` (from ``session.json``); ``None`` when unknown."""
    total: int | None = None
    """Messages in the history according to ``session.json``; ``None`` when unknown."""


def read_tail_records(path: Path, count: int, *, byte_budget: int = BYTE_BUDGET) -> list[Record]:
    """The last ``count`` whole message records of the ``messages.json`` at ``path``, oldest first.

    Lines that are not one whole message object are skipped. Never raises for a missing or unreadable
    file (logged, empty result).
    """
    if count <= 0:
        return []
    newest_first: list[Record] = []
    try:
        with os.fdopen(open_file(path, os.O_RDONLY), "rb") as stream:  # a planted link is refused
            position = stream.seek(0, os.SEEK_END)
            carry = b""  # the start of the region already read: a line cut by the chunk boundary
            consumed = 0
            while position > 0 and len(newest_first) < count and consumed < byte_budget:
                step = min(CHUNK_BYTES, position)
                position -= step
                stream.seek(position)
                lines = (stream.read(step) + carry).split(b"\n")
                consumed += step
                carry = lines.pop(0) if position > 0 else b""
                for line in reversed(lines):
                    record = parse_record(line)
                    if record is not None:
                        newest_first.append(record)
                        if len(newest_first) == count:
                            break
    except OSError as error:
        logger.warning("could not read the tail of %s: %s", path, error)
        return []
    newest_first.reverse()
    return newest_first


def parse_record(line: bytes) -> Record | None:
    """One line of ``messages.json`` as a message record, or ``None`` when it is not a whole one."""
    body = line.strip(b" \t\r")
    if body.endswith(b","):
        body = body[:-1]
    if not (body.startswith(b"{") and body.endswith(b"}")):
        return None
    try:
        value = json.loads(body)
    except ValueError:  # UnicodeDecodeError is a ValueError too
        return None
    if not isinstance(value, dict) or value.get("kind") not in ("request", "response") \
            or not isinstance(value.get("parts"), list):
        return None
    return value


def find_session_id(data_dir: DataDir, *, resume: str | None, continue_latest: bool) -> str | None:
    """The session ``--resume PREFIX`` or ``--continue`` names, when that is clear without the store
    (a unique prefix; the newest ``session.json``); ``None`` otherwise — the real opening decides and
    reports any error."""
    root = data_dir.sessions_dir
    try:
        ids = list_session_ids(root)
    except OSError:
        return None
    if resume:
        try:
            return resolve_prefix(ids, resume, root)
        except StoreError:
            return None
    if not continue_latest:
        return None
    newest: tuple[float, str, dict[str, Any]] | None = None
    for session_id in ids:
        meta = _read_meta(root / session_id)
        updated = meta.get("updated", meta.get("created"))
        if not isinstance(updated, (int, float)):
            return None  # no session.json (another program's session): only the store can tell the newest
        if newest is None or updated > newest[0]:
            newest = (float(updated), session_id, meta)
    if newest is None or _looks_abandoned(newest[2]):
        return None  # the store may clear it and continue an older one: do not guess
    return newest[1]


def read_session_tail(data_dir: DataDir, session_id: str, count: int) -> SessionTail:
    """The last ``count`` messages of ``session_id`` with its title and their history indices."""
    directory = data_dir.session_dir(session_id)
    meta = _read_meta(directory)
    records = read_tail_records(directory / "messages.json", count)
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    total = meta.get("message_count")
    if not isinstance(total, int) or isinstance(total, bool) or total < len(records):
        return SessionTail(session_id, title, records)
    return SessionTail(session_id, title, records, first_index=total - len(records), total=total)


def _looks_abandoned(meta: dict[str, Any]) -> bool:
    """A new session a killed deep-tui left untouched (``SessionStore`` clears those instead of continuing)."""
    return not (meta.get("message_count") or meta.get("parent") or meta.get("title") not in (None, "", "untitled")
                or meta.get("compressions") or meta.get("last_usage"))


def _read_meta(directory: Path) -> dict[str, Any]:
    """``session.json`` as a dict; empty when missing or unreadable (the real opening repairs it)."""
    try:
        value = json.loads(read_bytes(directory / "session.json"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
