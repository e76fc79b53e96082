"""Knowing that a sandbox is empty: every process a command started has ended.

bubblewrap reports the host PID of the sandbox's first process (the PID namespace's init) on its ``--info-fd``.
When that process has exited, the kernel has killed every other process in the namespace and waited for them,
so nothing the command started can still write. Checks made after a command (the ``.git`` scan) wait for this
first: ending bubblewrap's outer process only sends the init its kill, which it may take a moment to act on.
"""

from __future__ import annotations

import json
import logging
import os
import time

logger = logging.getLogger(__name__)

WAIT_SECONDS = 2.0
POLL_SECONDS = 0.002
INFO_MAX_BYTES = 64 * 1024


def sandbox_pid(info_fd: int) -> int | None:
    """The namespace init's host PID from bubblewrap's info pipe (read end, never blocking); ``None`` when
    bubblewrap wrote none (it failed before starting the sandbox)."""
    os.set_blocking(info_fd, False)
    try:
        raw = os.read(info_fd, INFO_MAX_BYTES)
    except BlockingIOError:
        return None
    except OSError as error:
        logger.debug("cannot read bubblewrap's info: %s", error)
        return None
    try:
        pid = json.loads(raw.decode("utf-8", errors="replace")).get("child-pid") if raw else None
    except (json.JSONDecodeError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 0 else None


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie has: it is only waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    state = stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3]
    return state not in (b"Z", b"X", b"")


def wait_until_empty(info_fd: int, within: float = WAIT_SECONDS) -> bool:
    """Wait (a worker thread's call) until the sandbox's init has exited; whether it has within ``within``."""
    pid = sandbox_pid(info_fd)
    if pid is None:
        return True
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            logger.warning("the sandbox's process %d is still running %.1f s after the command ended", pid, within)
            return False
        time.sleep(POLL_SECONDS)
    return True
