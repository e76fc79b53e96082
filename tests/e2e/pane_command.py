"""Run a command in a tmux pane and note its process id and exit status, for :class:`TmuxTerminal`.

``python pane_command.py RECORD_DIR -- COMMAND...``: writes ``RECORD_DIR/pid`` when the command starts and
``RECORD_DIR/status`` (its exit status, or minus the signal that killed it) when it ends. The command is
this process's child in the pane's foreground process group, as under a shell, so a closing terminal sends
it the kernel's SIGHUP and SIGCONT; this process ignores SIGHUP (set after the child started, which keeps
the default) so it outlives the terminal and can write the status.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    record = Path(argv[0])
    command = argv[argv.index("--") + 1:]
    child = subprocess.Popen(command)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    _note(record / "pid", child.pid)
    _note(record / "status", child.wait())
    return 0


def _note(path: Path, number: int) -> None:
    """Whole or not at all: the test polls for the file."""
    partial = path.with_suffix(".partial")
    partial.write_text(str(number))
    partial.replace(path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
