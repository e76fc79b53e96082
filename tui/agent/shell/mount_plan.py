"""The sandbox's filesystem, as bubblewrap mounts: what a command can read, write, or not see at all.

In order (bubblewrap applies them in this order, a later mount over an earlier one):

1. the whole filesystem read-only, a minimal ``/dev``, its own ``/proc``, a private empty ``/tmp``;
2. the working directory read-write;
3. when the working directory holds the home directory (deep-tui started in ``~`` or above it): the home
   directory read-only again — its hidden entries (``~/.bashrc``, ``~/.profile``, ``~/.gitconfig``,
   ``~/.config``, ``~/.local``…: what the user's shell, git and other programs run or read at start) and
   ``~/bin`` stay read-only, nothing can be created or removed directly in it, and each other entry
   (``~/src``, ``~/notes.txt``…) is writable as before;
4. every ``.git`` under the working directory read-only (:mod:`tui.agent.shell.git_guard`);
5. the hidden places (:meth:`MountPlan.hide`): an empty read-only directory over a directory, ``/dev/null``
   over a file.

A mount point cannot be moved, removed or replaced from inside the sandbox, and no command can unmount one
(every capability is dropped). So each hidden or read-only place inside a writable directory has each of its
writable parents up to the working directory bound over itself (:meth:`MountPlan.pin`): ``mv ~/.config away``
or ``mv project/.deep-tui elsewhere`` fails, and nothing can take their place.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

HOME_WRITABLE_EXCEPTIONS = frozenset({"bin"})
"""Visible entries of the home directory kept read-only all the same (``~/bin`` is on many users' PATH)."""


@dataclass
class MountPlan:
    """bubblewrap's mount arguments, built in order; knows which places are writable so far."""

    workdir: str
    args: list[str] = field(default_factory=list)
    _mounts: list[tuple[str, bool]] = field(default_factory=list)
    """Each mount point and whether it is writable, in the order mounted."""
    frozen: set[str] = field(default_factory=set)
    """Directories in the working directory where nothing at all is writable (a scan need not enter them)."""

    @classmethod
    def start(cls, workdir: Path) -> MountPlan:
        root = os.path.realpath(workdir)
        plan = cls(root)
        plan.args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        plan._mounts += [("/", False), ("/tmp", True)]
        plan.bind(root, writable=True)
        return plan

    def writable(self, path: str) -> bool:
        """Whether ``path`` is writable with the mounts so far (the deepest mount over it decides)."""
        best, mode = -1, False
        for point, writable in self._mounts:
            if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= best:
                best, mode = len(point), writable
        return mode

    def is_mount_point(self, path: str) -> bool:
        return any(point == path for point, _ in self._mounts)

    def bind(self, path: str, *, writable: bool) -> None:
        """Bind ``path`` over itself, writable or not."""
        self.args += ["--bind" if writable else "--ro-bind", path, path]
        self._mounts.append((path, writable))

    def pin(self, path: str) -> None:
        """Make every writable directory between the working directory and ``path`` a mount point of itself
        (as writable as it was), so none of them can be moved away or replaced."""
        if not path.startswith(self.workdir.rstrip("/") + "/"):
            return
        relative = os.path.relpath(path, self.workdir).split(os.sep)[:-1]
        current = self.workdir
        for name in relative:
            parent, current = current, os.path.join(current, name)
            if self.writable(parent) and not self.is_mount_point(current) and os.path.isdir(current) \
                    and not os.path.islink(current):
                self.bind(current, writable=self.writable(current))

    def hide(self, path: str) -> None:
        """Cover ``path`` (existing, resolved): an empty read-only directory, or ``/dev/null`` for a file."""
        self.pin(path)
        if os.path.isdir(path):
            self.args += ["--tmpfs", path, "--remount-ro", path]
            self.frozen.add(path)
        else:
            self.args += ["--ro-bind", "/dev/null", path]
        self._mounts.append((path, False))

    def read_only(self, path: str) -> None:
        """Bind ``path`` (existing) read-only over itself, its writable parents pinned."""
        self.pin(path)
        self.bind(path, writable=False)
        self.frozen.add(path)

    def guard_home(self, home: Path) -> list[str]:
        """Step 3 when the working directory holds ``home``; the entries left writable (for the tests)."""
        real = os.path.realpath(home)
        if not (real == self.workdir or real.startswith(self.workdir.rstrip("/") + "/")) or not os.path.isdir(real):
            return []
        self.pin(real)
        self.bind(real, writable=False)
        kept: list[str] = []
        try:
            names = sorted(os.listdir(real))
        except OSError as error:
            logger.warning("cannot list %s for the sandbox: %s", real, error)
            return []
        for name in names:
            if name.startswith(".") or name in HOME_WRITABLE_EXCEPTIONS:
                self.frozen.add(os.path.join(real, name))
                continue
            entry = os.path.join(real, name)
            if os.path.islink(entry) or not (os.path.isdir(entry) or os.path.isfile(entry)):
                continue  # a link keeps its target's own mode; a socket or FIFO stays read-only
            self.bind(entry, writable=True)
            kept.append(entry)
        return kept
