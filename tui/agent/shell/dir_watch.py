"""Which directories of the working directory changed since the last ``.git`` scan, from Linux's inotify.

The scan before and after each command (:mod:`tui.agent.shell.git_guard`) must notice an entry added, removed or
renamed anywhere in the working directory. Without help that is one ``lstat`` per directory and scan (its ctime
changes with every entry), twice per command: the most of what the sandbox added to a command in a tree of a few
thousand directories. With a watch on each directory the kernel says which changed, and only those are looked
at again.

A watch is trusted only as far as it can be:

- it is added *before* its directory is listed (or its ctime compared with the listing's), so no change can
  fall between the two unseen;
- the kernel queues an event in the changing system call itself, so once a command and everything it started
  have ended, all it did is in the queue;
- anything that makes the mapping from watches to paths doubtful — a watched directory moved or removed, a
  watch dropped, the queue overflowed (``IN_Q_OVERFLOW``), one directory seen under two paths, a read error —
  starts a new *epoch*: every directory is checked by its ``lstat`` again (the scan without watches) and
  watched anew. Where inotify cannot be used at all (not Linux, no instance left, no watch left:
  ``fs.inotify.max_user_watches``, or more than :data:`MAX_WATCHES` directories) the scan simply goes on without
  it.

(A file system the user mounts over a watched directory after it was watched is not seen: commands cannot do
that on the host, since they run in their own mount namespace.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import struct
import weakref

logger = logging.getLogger(__name__)

IN_ATTRIB = 0x00000004
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

WATCH_MASK = (IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
              | IN_ONLYDIR | IN_DONT_FOLLOW)
"""An entry added, removed or renamed in the directory, or its own attributes (the events its ctime shows), and
the directory itself moved or removed."""
DOUBTFUL = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED
"""Events after which a watch no longer stands for its path: a new epoch."""
_EVENT = struct.Struct("iIII")
READ_BYTES = 256 * 1024
MAX_WATCHES = 30_000
"""Directories watched at most per scan cache (each watch costs the kernel about a kilobyte); in a larger
working directory every directory is checked by its ``lstat`` instead."""


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


class DirectoryWatch:
    """Watches on the directories a scan went through; :meth:`changes` says which changed since the last call.

    Not thread-safe: the scan cache's lock is held around every use."""

    def __init__(self, libc: ctypes.CDLL, descriptor: int) -> None:
        self._libc = libc
        self._fd = descriptor
        self._paths: dict[int, str] = {}
        self._watched: dict[str, int] = {}
        self.epoch = 1
        """Listings made while a watch of this epoch was in place can be trusted without an ``lstat``."""
        self.usable = True
        """``False`` once inotify stopped being of use here (no watch left, a directory under two paths)."""
        self._doubtful = False
        self._finalizer = weakref.finalize(self, os.close, descriptor)

    @classmethod
    def create(cls) -> DirectoryWatch | None:
        """A new inotify instance, or ``None`` where there is none to have."""
        if _LIBC is None:
            return None
        descriptor = _LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if descriptor < 0:
            logger.info("no inotify instance for the .git scan (%s): every directory is checked each time",
                        os.strerror(ctypes.get_errno()))
            return None
        return cls(_LIBC, descriptor)

    def watch(self, directory: str) -> bool:
        """Watch ``directory`` (before it is listed or checked); whether it is watched in this epoch."""
        if not self.usable or self._doubtful:
            return False
        if directory in self._watched:
            return True
        if len(self._watched) >= MAX_WATCHES:
            logger.info("more than %d directories: the .git scan checks every directory each time", MAX_WATCHES)
            self.stop()
            return False
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(directory), WATCH_MASK)
        if wd < 0:
            error = ctypes.get_errno()
            if error == errno.ENOSPC:
                logger.info("no inotify watch left (fs.inotify.max_user_watches): the .git scan checks every "
                            "directory each time")
                self.stop()
            return False
        known = self._paths.get(wd)
        if known is not None and known != directory:  # one directory under two paths: a watch cannot say which
            logger.info("%s and %s are one directory: the .git scan checks every directory each time", known,
                        directory)
            self.stop()
            return False
        self._paths[wd] = directory
        self._watched[directory] = wd
        return True

    def changes(self) -> set[str] | None:
        """The watched directories changed since the last call; ``None`` when that cannot be told (a new epoch has
        begun: every directory must be checked again, and is watched anew)."""
        if not self.usable:
            return None
        changed: set[str] = set()
        while True:
            try:
                raw = os.read(self._fd, READ_BYTES)
            except BlockingIOError:
                break
            except OSError as error:
                logger.warning("reading the working directory's watch failed: %s", error)
                self._doubtful = True
                break
            if not raw:
                break
            self._note(raw, changed)
        if self._doubtful:
            self._new_epoch()
            return None
        return changed

    def _note(self, raw: bytes, changed: set[str]) -> None:
        offset = 0
        while offset + _EVENT.size <= len(raw):
            wd, mask, _cookie, length = _EVENT.unpack_from(raw, offset)
            offset += _EVENT.size + length
            if mask & DOUBTFUL:
                self._doubtful = True
                continue
            path = self._paths.get(wd)
            if path is not None:
                changed.add(path)

    def _new_epoch(self) -> None:
        """Forget every watch: a fresh instance, and the next scan checks (and watches) every directory again."""
        replacement = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        self._finalizer()
        self._paths.clear()
        self._watched.clear()
        self._doubtful = False
        if replacement < 0:
            self.usable = False
            self._fd = -1
            return
        self._fd = replacement
        self._finalizer = weakref.finalize(self, os.close, replacement)
        self.epoch += 1

    def stop(self) -> None:
        """No more watching: the scan checks every directory from now on."""
        self.usable = False
        self._paths.clear()
        self._watched.clear()
        self._finalizer()
        self._fd = -1
