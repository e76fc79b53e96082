"""What opening a session checks first: no planted link among its files, a damaged history repaired, messages
missing since session.json counted them — each found problem one warning line the user can act on."""

from __future__ import annotations

import os
from pathlib import Path

from tui.base.nofollow import LinkRefusedError
from tui.store.abandoned_sessions import PROMPT_HISTORY_FILE
from tui.store.checkpoints_file import CHECKPOINTS_FILE_NAME
from tui.store.handle import SessionHandle
from tui.store.store_errors import LinkedPathError
from tui.store.task_state import TASK_STATE_FILE

__all__ = ["check_history", "missing_messages_warning", "refuse_planted_links"]

_SESSION_FILES = ("messages.json", "session.json", "events.jsonl", PROMPT_HISTORY_FILE, CHECKPOINTS_FILE_NAME,
                  TASK_STATE_FILE)


def refuse_planted_links(directory: Path) -> None:
    """A session whose files include a link is not opened at all (each open would refuse it anyway; this
    says so once, before anything is read or written)."""
    for name in _SESSION_FILES:
        path = directory / name
        if os.path.islink(path):
            raise LinkedPathError(f"cannot open session {directory.name}: {LinkRefusedError(path)}")


def check_history(handle: SessionHandle, *, repair: bool) -> None:
    """Repair a damaged messages.json (a writer only) and put what the user must know in the warnings."""
    history = handle.messages
    if repair:
        try:
            report = history.repair()
        except OSError as error:
            handle.warnings.append(f"{history.path} is damaged and could not be rewritten "
                                   f"({error.strerror or error}); it is read around the damage")
        else:
            if report is not None:
                handle.warnings.append(report.describe())
    warning = history.damage_warning()
    if warning:
        handle.warnings.append(warning)


def missing_messages_warning(handle: SessionHandle, recorded: int, actual: int) -> str:
    """The warning for a history shorter than session.json recorded (``actual`` < ``recorded`` messages)."""
    path = handle.messages.path
    if actual == 0:
        state = "is missing" if not path.exists() else "is empty"
        return (f"{path} {state}, but session.json recorded {recorded} messages: they were removed outside "
                "deep-tui (restore the file from a backup to get them back); the session goes on from an "
                "empty history")
    missing = recorded - actual
    return (f"{path} holds {actual} messages, but session.json recorded {recorded} messages: {missing} "
            f"{'is' if missing == 1 else 'are'} missing (removed or damaged outside deep-tui; restore the file "
            "from a backup to get them back)")
