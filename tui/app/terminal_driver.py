"""The driver deep-tui runs with in a terminal: Textual's Linux driver, made to survive its terminal going away.

When the terminal closes (a killed tmux window, a closed terminal emulator, a dropped SSH link), the kernel
hangs up the tty: every write to it fails with EIO, and the process gets SIGHUP *and* SIGCONT. Textual's
driver answers SIGCONT by starting application mode again, with a new output thread that dies on its first
write; the next 30 writes fill that thread's queue and the 31st blocks the app for ever — the app never
exits and keeps its session's lock. Here:

- a write the terminal refuses redirects the terminal's output descriptors to ``/dev/null`` (nothing can be
  shown any more, and nothing may block or fail: not the next frame, not leaving application mode, not
  Python's last flush at exit) and tells the app (:class:`TerminalDriver.TerminalGone`), which stops as for
  SIGHUP: the running turn recorded as interrupted, the lock released, exit status 129;
- SIGCONT does not restart application mode on a terminal that is gone (it tells the app instead).

(The one private name used: Textual's Linux driver keeps its output file in ``_file``; the tmux tests in
``tests/e2e/test_terminal_gone.py`` fail if that changes.)
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import termios
import threading
from typing import IO, TYPE_CHECKING, Any

from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.driver import Driver

logger = logging.getLogger(__name__)


class TerminalOutput:
    """The file Textual's output thread writes to: the terminal, until it refuses a write.

    From then on the descriptors that showed the terminal point at ``/dev/null``, so the text still buffered
    and every later write succeeds without showing anything; ``on_gone`` is called once."""

    def __init__(self, file: IO[str], on_gone: Callable[[], None]) -> None:
        self._file = file
        self._on_gone = on_gone
        self._lock = threading.Lock()
        self.gone = False
        self._terminal = _device(file.fileno())

    def write(self, text: str) -> int:
        try:
            return self._file.write(text)
        except OSError as error:
            self._lost(error)
            return len(text)

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError as error:
            self._lost(error)
            try:
                self._file.flush()  # what was buffered for the terminal now goes to /dev/null
            except OSError as again:  # not a terminal we could silence (a closed pipe): the text is dropped
                logger.debug("output dropped: %s", again)

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return not self.gone

    def _lost(self, error: OSError) -> None:
        with self._lock:
            if self.gone:
                return
            self.gone = True
        logger.info("the terminal is gone (%s): output goes to /dev/null, the app stops as for SIGHUP", error)
        silence_terminal(self._terminal)
        self._on_gone()


def _device(descriptor: int) -> tuple[int, int] | None:
    """What a descriptor is open on, to recognise the other descriptors showing the same terminal."""
    try:
        status = os.fstat(descriptor)
    except OSError:
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISCHR(status.st_mode) else None


def silence_terminal(terminal: tuple[int, int] | None) -> None:
    """Point stdout and stderr at ``/dev/null`` where they show ``terminal`` (a character device)."""
    if terminal is None:
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for descriptor in (1, 2):
            if _device(descriptor) == terminal:
                os.dup2(null, descriptor)
    finally:
        os.close(null)


def terminal_is_gone(descriptor: int) -> bool:
    """The terminal behind ``descriptor`` was hung up (its attributes can no longer be read: EIO)."""
    try:
        termios.tcgetattr(descriptor)
    except termios.error as error:
        return bool(error.args) and error.args[0] == errno.EIO  # a hung-up tty; ENOTTY (not a tty) is not gone
    return False


class TerminalDriver(LinuxDriver):
    """:class:`~textual.drivers.linux_driver.LinuxDriver` that never blocks on, or restarts into, a closed
    terminal, and tells the app the terminal is gone."""

    class TerminalGone(Message):
        """The terminal closed under the app (posted once, from the driver's threads or a signal handler)."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._told_gone = threading.Event()
        self._output: TerminalOutput | None = None
        if self._file is not None:  # None: Python started without a stderr; Textual fails on its own
            self._output = TerminalOutput(self._file, on_gone=self._terminal_gone)
            self._file = self._output  # type: ignore[assignment]  # Textual's output thread only writes, flushes

    def _terminal_gone(self) -> None:
        if not self._told_gone.is_set():
            self._told_gone.set()
            self.send_message(self.TerminalGone())

    def resume_application_mode(self) -> None:
        """After SIGCONT (or :meth:`App.suspend`): full-screen mode again, unless the terminal is gone."""
        if self.input_tty and terminal_is_gone(self.fileno):
            logger.info("resumed on a terminal that is gone: application mode is not started again")
            self._terminal_gone()
            return
        super().resume_application_mode()


def terminal_driver_for(driver_class: type[Driver]) -> type[Driver]:
    """The driver deep-tui runs with: :class:`TerminalDriver` where Textual would pick its Linux driver,
    Textual's choice otherwise (Windows, a served tab's ``TEXTUAL_DRIVER``, tests' headless driver)."""
    return TerminalDriver if driver_class is LinuxDriver else driver_class
