"""Drive a real terminal: run a command in a detached tmux session, type, read the screen."""

from __future__ import annotations

import shlex
import subprocess
import time
import uuid
from collections.abc import Mapping
from pathlib import Path


class TmuxTerminal:
    """One detached tmux session running one command at a fixed size."""

    def __init__(self, command: list[str], *, cwd: Path, env: Mapping[str, str], width: int = 120,
                 height: int = 36) -> None:
        self.name = f"deeptui-e2e-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        shell_command = f"cd {shlex.quote(str(cwd))} && env {exports} {shlex.join(command)}; sleep 30"
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell_command],
            check=True,
        )

    def screen(self) -> str:
        """The visible pane as plain text."""
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], check=True, capture_output=True, text=True
        ).stdout

    def send(self, *keys: str) -> None:
        """Keys in tmux notation (``Enter``, ``Escape``, ``C-s``) or literal text with ``-l``."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        """Poll the screen until ``text`` shows; fail with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} did not appear within {timeout}s; screen was:\n{screen}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False, capture_output=True)
