"""Ground-level error type and exit statuses shared by the command line, the app and the headless commands.

Nothing here imports another deep-tui module, so any layer can raise :class:`UserFacingError`
without depending on the command line.
"""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_FAILURE = 1
"""The turn failed (provider error, cancelled, history not saved) or a delete or trust was declined."""
EXIT_USAGE = 2
"""A usage or data problem: bad flag or id, locked or unreadable session, config, model, data directory."""
EXIT_INTERRUPTED = 130
"""Ctrl+C."""
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that stop a turn the way Ctrl+C (SIGINT) does: what it produced is kept, marked interrupted, the
session's lock released; the exit status is :func:`stopped_by` the signal."""


def stopped_by(signum: signal.Signals) -> int:
    """The exit status of a process stopped by ``signum``: 128 + its number, as a shell reports it."""
    return 128 + signum.value


class UserFacingError(Exception):
    """An error caused by input; printed as one line, exit status :data:`EXIT_USAGE` unless told otherwise."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code
