"""Copying: OSC 52 through the terminal, plus the system clipboard tool when one is installed.

OSC 52 does not work everywhere (macOS Terminal, some multiplexers), so the text
also goes to ``pbcopy``, ``wl-copy``, ``xclip`` or ``xsel`` if present.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from typing import Any

from textual.app import App

logger = logging.getLogger(__name__)

SYSTEM_TOOLS: tuple[tuple[str, ...], ...] = (
    ("pbcopy",),
    ("wl-copy",),
    ("xclip", "-selection", "clipboard"),
    ("xsel", "--clipboard", "--input"),
)


def copy_with_system_tool(text: str) -> str | None:
    """Pipe ``text`` to the first clipboard tool found; returns its name, or ``None`` if none worked."""
    for command in SYSTEM_TOOLS:
        if shutil.which(command[0]) is None:
            continue
        try:
            subprocess.run(command, input=text.encode("utf-8"), check=True, timeout=2,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as error:
            logger.info("clipboard tool %s failed: %s", command[0], error)
            continue
        return command[0]
    return None


def copy_text(app: App[Any], text: str, what: str) -> None:
    """Copy ``text`` (OSC 52 and the system tool) and say so in one toast: ``copied <what> via …``.

    The terminal gets it at once; the system tool runs in a thread worker, so a slow or hanging
    tool never freezes the UI, and the toast comes when it is done.
    """
    App.copy_to_clipboard(app, text)  # the terminal (OSC 52) and app.clipboard, without any override

    def with_system_tool() -> None:
        tool = copy_with_system_tool(text)
        via = f"terminal and {tool}" if tool else "terminal (OSC 52)"
        app.call_from_thread(app.notify, f"copied {what} via {via}", timeout=2, markup=False)

    app.run_worker(with_system_tool, thread=True, group="clipboard", name="clipboard", exit_on_error=False)
