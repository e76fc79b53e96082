"""Errors the session store raises; each message is one line a user can act on."""

from __future__ import annotations

from tui.base.nofollow import LinkRefusedError


class StoreError(Exception):
    """Base of every store error (printed as ``deep-tui: error: <message>``)."""


class UnknownSessionError(StoreError):
    """No session matches the id or prefix."""


class AmbiguousSessionError(StoreError):
    """A prefix matches more than one session."""


class SessionLockedError(StoreError):
    """Another deep-tui process (or handle) is writing this session."""


class CorruptSessionError(StoreError):
    """A session file cannot be read at all (partial damage is tolerated elsewhere)."""


class LockFileError(StoreError):
    """The session's ``lock`` file cannot be used (it is a directory, or not readable)."""


class StorageError(StoreError):
    """A session file cannot be written or read (a full disk, a read-only file system, permissions)."""

    @classmethod
    def of(cls, action: str, error: OSError) -> StorageError:
        """``cannot <action>: <reason> (<file>)`` from an ``OSError`` (a refused link: :class:`LinkedPathError`)."""
        if isinstance(error, LinkRefusedError):
            return LinkedPathError(f"cannot {action}: {error}")
        where = f" ({error.filename})" if error.filename else ""
        return cls(f"cannot {action}: {error.strerror or error}{where}")


class LinkedPathError(StorageError):
    """A file or directory of the data directory is a symbolic link deep-tui did not make: refused, not followed."""
