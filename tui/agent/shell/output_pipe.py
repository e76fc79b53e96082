"""A command's output pipe, drained by a thread of its own so the command runs at full speed whatever the app does.

Read from the event loop, a pipe is drained only between the loop's other work: while the app draws a frame (tens of
milliseconds in a long chat) a command printing at full speed fills the pipe's 64 KB and stops until the loop comes
back, so printing to the screen was slower than printing to a file. Here a thread reads (``os.read`` waits without
holding the GIL) into a list, the pipe is made larger where Linux allows, and the loop is woken once for whatever
came since it last looked — not once per write of the command.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import logging
import os
import select
import threading
import time

logger = logging.getLogger(__name__)

PIPE_BYTES = 1024 * 1024
"""The pipe's size asked for (Linux ``F_SETPIPE_SZ``; up to ``/proc/sys/fs/pipe-max-size``, 1 MB by default)."""
CHUNK_BYTES = 1024 * 1024
POLL_SECONDS = 0.1
"""How often a thread waiting for output looks whether it was told to stop."""
GATHER_SECONDS = 0.002
"""After a read that did not fill :data:`CHUNK_BYTES`, the thread waits this long for more to gather in the pipe: a
command writing 4 KB at a time is read in a few large pieces rather than thousands of small ones (the pipe holds
a megabyte, so the command does not wait meanwhile)."""
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


class OutputPipe:
    """A pipe whose write end the command gets (:attr:`write_fd`) and whose read end a daemon thread drains.

    :meth:`take` (on the event loop) returns the text read since the last call, waiting for some if there is none
    yet, and whether the output has ended (the pipe closed by every writer, or the reading stopped). Past
    ``cap_bytes`` nothing more is kept (the rest is read and dropped) and :attr:`capped` is set."""

    def __init__(self, cap_bytes: int) -> None:
        self._read_fd, self.write_fd = os.pipe2(os.O_CLOEXEC)
        with contextlib.suppress(OSError):  # not Linux, or over the limit: the default size is fine, only slower
            fcntl.fcntl(self.write_fd, _F_SETPIPE_SZ, PIPE_BYTES)
        self._cap_bytes = cap_bytes
        self.byte_count = 0
        """Bytes kept (at most ``cap_bytes``)."""
        self.capped = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lock = threading.Lock()
        self._texts: list[str] = []
        self._ended = False
        self._stopping = False
        self._arrived = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Close this process's copy of the write end (the command holds its own) and start reading."""
        self.close_write_end()
        self._thread = threading.Thread(target=self._drain, name="deep-tui-command-output", daemon=True)
        self._thread.start()

    def close_write_end(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def close(self) -> None:
        """Stop reading (the thread ends within :data:`POLL_SECONDS` and closes the read end); never started, both
        ends are closed now."""
        self.close_write_end()
        with self._lock:
            self._stopping = True
        if self._thread is None and self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1

    async def take(self) -> tuple[list[str], bool]:
        """The text read since the last call (in order, in pieces), and whether the output has ended."""
        await self._arrived.wait()
        self._arrived.clear()
        with self._lock:
            texts, self._texts = self._texts, []
            return texts, self._ended

    def _drain(self) -> None:
        poller = select.poll()
        poller.register(self._read_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        try:
            while not self._stopping:
                if not poller.poll(POLL_SECONDS * 1000):
                    continue
                data = os.read(self._read_fd, CHUNK_BYTES)
                if not data:
                    break
                self._keep(data)
                if len(data) < CHUNK_BYTES:
                    time.sleep(GATHER_SECONDS)
        except OSError as error:
            logger.warning("reading the command's output failed: %s", error)
        finally:
            os.close(self._read_fd)
            self._read_fd = -1
            self._keep(b"", final=True)
            with self._lock:
                self._ended = True
            self._wake()

    def _keep(self, data: bytes, *, final: bool = False) -> None:
        if self.capped and not final:
            return
        room = self._cap_bytes - self.byte_count
        capped_now = len(data) > room
        if capped_now:
            data = data[:room]
            self.capped = True
        self.byte_count += len(data)
        text = self._decoder.decode(data, final=final)
        with self._lock:
            first = not self._texts
            if text:
                self._texts.append(text)
        if (first and text) or capped_now:  # the loop is told at once that the command must be stopped
            self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._arrived.set)
