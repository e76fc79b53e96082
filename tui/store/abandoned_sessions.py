"""Empty sessions a killed deep-tui left behind: recognised (nothing was ever written to them) and removed."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from tui.base.nofollow import read_bytes
from tui.store.lock import SessionLock
from tui.store.meta import UNTITLED, read_meta
from tui.store.store_errors import StoreError

logger = logging.getLogger(__name__)

__all__ = ["discard_if_untouched", "holds_only_a_new_session"]

_NEW_SESSION_FILES = frozenset({"session.json", "messages.json", "lock"})
"""All a new session holds before its first message; a directory holding anything else is never cleared."""
_EMPTY_HISTORIES = (b"", b"[]", b"[\n]", b"[\n]\n", b"[\n")
PROMPT_HISTORY_FILE = "prompt_history.jsonl"
"""The app's prompt history (``tui.store.prompt_history``): a new session holding one with only slash commands
in it (e.g. ``/context`` typed before any message) is still untouched."""
_PROMPT_HISTORY_LIMIT = 64 * 1024


def _only_commands_typed(path: Path) -> bool:
    """Every entry of a prompt history file is a slash command (``//`` starts a message): nothing typed there
    would be lost with the session. Anything unreadable, long or unexpected counts as a message."""
    try:
        if os.lstat(path).st_size > _PROMPT_HISTORY_LIMIT:
            return False
        lines = read_bytes(path).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            return False
        if not isinstance(entry, str) or not entry.startswith("/") or entry.startswith("//"):
            return False
    return True


def discard_if_untouched(directory: Path, session_id: str) -> bool:
    """Remove a session only while its directory holds nothing but an untouched empty new session:
    session.json, an unheld lock, an absent or empty messages.json and at most a prompt history of slash
    commands. Anything else there (events, kept copies, a history with content) keeps the whole directory.
    Returns True when it was removed.
    """
    lock = SessionLock(directory, session_id)
    try:
        lock.acquire()  # nobody can open the session while it is examined and cleared
    except StoreError as error:  # open somewhere (or an unusable lock file): not abandoned
        logger.debug("keeping session %s: %s", session_id, error)
        return False
    try:
        untouched = holds_only_a_new_session(directory)
        if untouched:
            logger.info("removing empty abandoned session %s", session_id)
            for name in ("messages.json", "session.json", PROMPT_HISTORY_FILE):
                (directory / name).unlink(missing_ok=True)
    except OSError as error:
        logger.warning("could not clear empty session %s: %s", session_id, error)
        untouched = False
    finally:
        lock.release(remove_if_created=True)
    if not untouched:
        return False
    try:
        (directory / "lock").unlink(missing_ok=True)
        directory.rmdir()  # fails, keeping everything, if a file appeared meanwhile
    except OSError as error:
        logger.warning("could not remove the directory of empty session %s: %s", session_id, error)
        return False
    return True


def holds_only_a_new_session(directory: Path) -> bool:
    """The files of a session nobody wrote to (a prompt history of slash commands alone included)."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name == PROMPT_HISTORY_FILE and entry.is_file(follow_symlinks=False) \
                    and _only_commands_typed(Path(entry.path)):
                continue
            if entry.name not in _NEW_SESSION_FILES or not entry.is_file(follow_symlinks=False):
                return False
    history = directory / "messages.json"
    if os.path.lexists(history) and (os.lstat(history).st_size > 8 or read_bytes(history) not in _EMPTY_HISTORIES):
        return False
    try:
        meta = read_meta(directory / "session.json", directory.name)
    except (ValueError, TypeError, KeyError, OSError):
        return False
    return not (meta.message_count or meta.parent or meta.title != UNTITLED or meta.compressions
                or meta.last_usage)
