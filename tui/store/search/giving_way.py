"""The background catch-up gives way while a session opens: :class:`GiveWay`.

Indexing what changed on disk (:meth:`SearchIndex.sync` in the app's background thread) parses and
writes whole histories; while a session opens, that work would take the CPU (and the GIL) from reading
the opened history and painting its last page. The app holds the catch-up for as long as the open is
under way and a moment after its last page is painted; the catch-up waits at its next step
(between sessions, between pieces of one) and carries on after. Nothing is skipped, only delayed.
No Textual here.
"""

from __future__ import annotations

import threading
import time

OPENING_SECONDS = 5.0
"""An open holds the catch-up this long at most (the app ends the hold sooner, after the last page is painted)."""
AFTER_PAINT_SECONDS = 1.0
"""The catch-up still waits this long once an opened session's last page is painted (the first scrolling)."""
LONGEST_WAIT = 10.0
"""A catch-up never waits longer than this at one step, whatever it is asked (a hold nobody ends)."""


class GiveWay:
    """A hold the opening side sets and the catch-up honours (thread-safe)."""

    def __init__(self) -> None:
        self._until = 0.0
        """``time.monotonic()`` until which the catch-up waits (0: no hold)."""
        self._changed = threading.Condition()

    def hold(self, seconds: float) -> None:
        """Hold the catch-up from now for ``seconds`` (replacing the hold before; 0 ends it)."""
        with self._changed:
            self._until = time.monotonic() + min(max(seconds, 0.0), LONGEST_WAIT) if seconds > 0 else 0.0
            self._changed.notify_all()

    @property
    def holding(self) -> bool:
        return time.monotonic() < self._until

    def wait(self) -> float:
        """Wait while held (at most :data:`LONGEST_WAIT`); returns the seconds waited."""
        started = time.monotonic()
        with self._changed:
            while (left := min(self._until, started + LONGEST_WAIT) - time.monotonic()) > 0:
                self._changed.wait(left)
        return time.monotonic() - started
