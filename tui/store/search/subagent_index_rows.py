"""Subagent histories in the search index: ``sessions/<id>/subagents/<n>/messages.json`` is indexed as a row of
its own, keyed ``<id>/subagents/<n>`` (its messages are numbered in its own history, so it never joins its
session's rows), found on disk by stat calls without following a link, and attributed to the session it
belongs to: a hit in it names that session (its title) and the subagent, and opening it opens that session."""

from __future__ import annotations

import os
import stat

from tui.store.search.session_folders import DiskSession
from tui.store.subagent_histories import SUBAGENTS_DIR_NAME

SUBAGENT_PART = f"/{SUBAGENTS_DIR_NAME}/"


def subagent_key(session_id: str, number: int) -> str:
    """The index's key (and the scan's target) for subagent ``number`` of ``session_id``."""
    return f"{session_id}{SUBAGENT_PART}{number}"


def split_key(key: str) -> tuple[str, int | None]:
    """``(the session, the subagent's number)`` of an index key; ``(key, None)`` for a session's own."""
    owner, part, tail = key.partition(SUBAGENT_PART)
    if not part or not tail.isdigit() or not owner:
        return key, None
    return owner, int(tail)


def owner_of(key: str) -> str:
    """The session a key's history belongs to (what opening a hit in it opens)."""
    return split_key(key)[0]


def list_disk_subagents(sessions: dict[str, DiskSession]) -> dict[str, DiskSession]:
    """The subagent histories of ``sessions`` (stat calls only; a session without subagents costs one ``lstat``),
    keyed by :func:`subagent_key`. A link — the ``subagents`` folder, a subagent's folder or its messages.json — is
    never followed: what it points to is not indexed."""
    found: dict[str, DiskSession] = {}
    for session in sessions.values():
        root = os.path.join(session.path, SUBAGENTS_DIR_NAME)
        try:
            if not stat.S_ISDIR(os.lstat(root).st_mode):
                continue
            entries = [entry for entry in os.scandir(root)
                       if entry.name.isdigit() and entry.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            try:
                history = os.lstat(os.path.join(entry.path, "messages.json"))
            except OSError:
                continue
            if stat.S_ISREG(history.st_mode):
                key = subagent_key(session.id, int(entry.name))
                found[key] = DiskSession(key, entry.path, history.st_size, history.st_mtime_ns, 0)
    return found
