"""The process's own stdout, for the commands that print (``run``, ``sessions``, ``search``)."""

from __future__ import annotations

import os
import sys


def silence_stdout() -> None:
    """Point stdout at /dev/null after its reader went away, so the exit flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
