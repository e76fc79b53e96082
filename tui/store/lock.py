"""One writer per session: an advisory ``flock`` on ``<session>/lock``."""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

from tui.base.nofollow import LinkRefusedError, open_file
from tui.store.store_errors import LockFileError, SessionLockedError

logger = logging.getLogger(__name__)

_HELD_IN_PROCESS: set[Path] = set()


class SessionLock:
    """Held while a session is open for writing; another process or handle is refused."""

    def __init__(self, directory: Path, session_id: str) -> None:
        self.path = directory / "lock"
        self.session_id = session_id
        self._descriptor: int | None = None
        self._created = False

    def acquire(self) -> None:
        key = self.path.resolve()
        if key in _HELD_IN_PROCESS:
            raise SessionLockedError(f"session {self.session_id} is already open in this deep-tui")
        self._created = not os.path.lexists(self.path)
        try:
            descriptor = open_file(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # a planted link is refused
        except LinkRefusedError as error:
            raise LockFileError(f"cannot lock session {self.session_id}: {error}") from None
        except IsADirectoryError:
            raise LockFileError(f"cannot lock session {self.session_id}: {self.path} is a directory, not a lock "
                                "file (remove it if no deep-tui is using this session)") from None
        except OSError as error:
            raise LockFileError(f"cannot lock session {self.session_id}: {self.path}: "
                                f"{error.strerror or error}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 32).decode(errors="replace").strip() or "unknown"
            os.close(descriptor)
            raise SessionLockedError(
                f"session {self.session_id} is open in another deep-tui (pid {holder}); close it first"
            ) from None
        try:  # the pid only helps the message another deep-tui prints; a full disk must not stop the open
            os.ftruncate(descriptor, 0)
            os.write(descriptor, str(os.getpid()).encode())
        except OSError as error:
            logger.warning("could not write the pid into %s: %s", self.path, error)
        self._descriptor = descriptor
        _HELD_IN_PROCESS.add(key)

    def release(self, *, remove_if_created: bool = False) -> None:
        """Unlock; ``remove_if_created`` also deletes a lock file this lock made (an open that failed
        leaves the session directory as it found it)."""
        if self._descriptor is None:
            return
        _HELD_IN_PROCESS.discard(self.path.resolve())
        if remove_if_created and self._created:
            self.path.unlink(missing_ok=True)
        fcntl.flock(self._descriptor, fcntl.LOCK_UN)
        os.close(self._descriptor)
        self._descriptor = None


def is_locked(directory: Path) -> bool:
    """True when some process holds the session's lock (used before deleting).

    A lock file that cannot be opened counts as held: nothing is deleted on a guess. A link in its place
    (or on the way to it) raises :class:`~tui.store.store_errors.LockFileError` naming it."""
    path = directory / "lock"
    if not os.path.lexists(path):
        return False
    if path.resolve() in _HELD_IN_PROCESS:
        return True
    try:
        descriptor = open_file(path, os.O_RDONLY)
    except LinkRefusedError as error:
        raise LockFileError(str(error)) from None
    except OSError:
        return True
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False
