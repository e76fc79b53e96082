"""SIGTERM and SIGHUP (a closed terminal, ``kill``, a logout) end the app the way Esc then Ctrl+Q would.

Without a handler either signal ends the process at once and the answer on the screen is lost. Here the
running turn is cancelled first — the session records what it produced, marked interrupted, as for Esc —
then the app exits with status 128 + the signal's number; :func:`tui.app.run.run_app` closes the session
(its lock) on the way out. A terminal that closes under the app without a SIGHUP reaching it (the driver sees
its writes refused, :mod:`tui.app.terminal_driver`) stops it the same way.

Should that way out itself hang, a last-resort timer ends the process :data:`EXIT_DEADLINE_SECONDS` after the
signal (the kernel releases the lock with the process): a deep-tui whose terminal is gone never runs for ever.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from typing import TYPE_CHECKING, Any

from textual.worker import WorkerCancelled, WorkerFailed

from tui.app.worker_groups import TURN_GROUP
from tui.base.errors import STOP_SIGNALS, stopped_by

if TYPE_CHECKING:
    from textual.app import App

logger = logging.getLogger(__name__)

EXIT_DEADLINE_SECONDS = 20.0
"""How long after a stop signal the app may take to record the turn and close before the process is ended."""


class StopSignals:
    """Installs the handlers on the app's event loop while it runs (``install`` on mount, ``uninstall`` after)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.received: signal.Signals | None = None
        self._installed: list[signal.Signals] = []
        self._deadline: threading.Timer | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            try:
                loop.add_signal_handler(signum, self._received, signum)
                self._installed.append(signum)
            except (ValueError, RuntimeError, NotImplementedError) as error:  # not the main thread (a test)
                logger.info("%s will end the app without recording a running turn: %s", signum.name, error)

    def uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in self._installed:
            loop.remove_signal_handler(signum)
        self._installed.clear()

    def terminal_gone(self) -> None:
        """The terminal closed: stop as SIGHUP does (which usually arrives too; the second is ignored)."""
        self._received(signal.SIGHUP)

    def disarm(self) -> None:
        """The app has exited and its session is closed: the last-resort timer is no longer needed."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _received(self, signum: signal.Signals) -> None:
        if self.received is not None:  # a second signal must not interrupt the saving the first one started
            return
        self.received = signum
        logger.info("%s received: the running turn is cancelled and recorded, then the app ends", signum.name)
        if not self.app.is_headless:  # a test's app shares its process with the test runner
            self._deadline = threading.Timer(EXIT_DEADLINE_SECONDS, self._exit_now, args=(signum,))
            self._deadline.daemon = True
            self._deadline.start()
        self.app.run_worker(self._stop(signum), group="stop-signal", exclusive=True)

    @staticmethod
    def _exit_now(signum: signal.Signals) -> None:
        logger.error("the app did not end within %.0f s of %s: the process ends now", EXIT_DEADLINE_SECONDS,
                     signum.name)
        os._exit(stopped_by(signum))

    async def _stop(self, signum: signal.Signals) -> None:
        turns = [worker for worker in self.app.workers if worker.group == TURN_GROUP and worker.is_running]
        for worker in turns:  # whichever screen runs it
            worker.cancel()
        for worker in turns:
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed) as error:  # the cancel we asked for; the turn recorded itself
                logger.debug("turn worker ended: %s", error)
        self.app.exit(return_code=stopped_by(signum))
