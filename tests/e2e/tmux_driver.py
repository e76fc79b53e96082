"""Drive a real terminal: run a command in a detached tmux session, type, read the screen."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

PANE_COMMAND = Path(__file__).with_name("pane_command.py")
PATIENCE = float(os.environ.get("DEEP_TUI_TEST_PATIENCE", "180"))
"""How long a wait lasts before the test calls it a hang (as in tests/app/app_support.py): a guard, not a timing,
since every wait ends when what it waits for shows."""


def deep_tui_command() -> list[str]:
    """The installed ``deep-tui`` next to this Python, or the module from the source tree."""
    installed = Path(sys.executable).parent / "deep-tui"
    return [str(installed)] if installed.exists() else [sys.executable, "-m", "tui.cli"]


class TmuxTerminal:
    """One detached tmux session running one command at a fixed size.

    The command runs under :mod:`tests.e2e.pane_command`, which notes its process id and exit status:
    :meth:`wait_exit` waits for it to end by itself, :meth:`close` makes sure it is gone (a test never
    leaves a process behind, whatever it asserted)."""

    def __init__(self, command: list[str], *, cwd: Path, env: Mapping[str, str], width: int = 120,
                 height: int = 36, shell_ignores_hangup: bool = False, own_server: bool = False) -> None:
        """``shell_ignores_hangup``: the pane's shell outlives its terminal, so the kernel's SIGHUP never
        reaches the command (it only goes to the process group of a session leader that exits).
        ``own_server``: a tmux server of its own (its own socket, no config file read), for a test that changes
        server options; it ends with :meth:`close`."""
        self.name = f"deeptui-e2e-{uuid.uuid4().hex[:8]}"
        self.server = ["-L", self.name, "-f", os.devnull] if own_server else []
        """tmux's arguments choosing the server (:meth:`tmux` passes them)."""
        self._record = Path(tempfile.mkdtemp(prefix="deeptui-pane-"))
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        wrapped = [sys.executable, str(PANE_COMMAND), str(self._record), "--", *command]
        trap = "trap '' HUP; " if shell_ignores_hangup else ""
        shell_command = f"{trap}cd {shlex.quote(str(cwd))} && env {exports} {shlex.join(wrapped)}; sleep 30"
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell_command)

    def tmux(self, *arguments: str) -> str:
        """Run a tmux command on this terminal's server; its output."""
        return subprocess.run(["tmux", *self.server, *arguments], check=True, capture_output=True, text=True).stdout

    @property
    def pid(self) -> int:
        """The command's process id (waits for it to start)."""
        deadline = time.monotonic() + PATIENCE
        while not (self._record / "pid").exists():
            if time.monotonic() > deadline:
                raise AssertionError(f"the command never started; screen was:\n{self.screen()}")
            time.sleep(0.05)
        return int((self._record / "pid").read_text())

    def exit_status(self) -> int | None:
        """The command's exit status (minus the signal that killed it), ``None`` while it runs."""
        status = self._record / "status"
        return int(status.read_text()) if status.exists() else None

    def wait_exit(self, timeout: float = PATIENCE) -> int:
        """Wait for the command to end by itself; its exit status."""
        deadline = time.monotonic() + timeout
        while (status := self.exit_status()) is None and _alive(self.pid):
            if time.monotonic() > deadline:
                raise AssertionError(f"the command was still running {timeout}s later; screen:\n{self.screen()}")
            time.sleep(0.05)
        if status is None:  # ended, the wrapper is noting it (or the wrapper itself is gone)
            time.sleep(0.5)
            status = self.exit_status()
        if status is None:
            raise AssertionError("the command ended but its exit status was not recorded")
        return status

    def screen(self) -> str:
        """The visible pane as plain text."""
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def send(self, *keys: str) -> None:
        """Keys in tmux notation (``Enter``, ``Escape``, ``C-s``) or literal text with ``-l``."""
        self.tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)

    def wait_for(self, text: str, timeout: float = PATIENCE) -> str:
        """Poll the screen until ``text`` shows; fail with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} did not appear within {timeout}s; screen was:\n{screen}")

    def wait_gone(self, text: str, timeout: float = PATIENCE) -> str:
        """Poll the screen until ``text`` no longer shows (a dialog closed)."""
        deadline = time.monotonic() + timeout
        while text in (screen := self.screen()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} still showed after {timeout}s; screen was:\n{screen}")
            time.sleep(0.2)
        return screen

    def kill_session(self) -> None:
        """Close the terminal, as closing its window does: the command gets the kernel's SIGHUP and SIGCONT."""
        subprocess.run(["tmux", *self.server, "kill-session", "-t", self.name], check=False, capture_output=True)

    def close(self, grace: float = 5.0) -> bool:
        """Close the terminal and make sure the command is gone: killed (SIGKILL) if it is still running
        ``grace`` seconds later. Whether it ended by itself."""
        pid = int((self._record / "pid").read_text()) if (self._record / "pid").exists() else None
        self.kill_session()
        if pid is None:
            return True
        deadline = time.monotonic() + grace
        while _alive(pid) and self.exit_status() is None:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                return False
            time.sleep(0.05)
        shutil.rmtree(self._record, ignore_errors=True)
        return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
