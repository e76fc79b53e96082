"""The process's own stdout and stderr, for the commands that print (``run``, ``sessions``, ``search``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from tui.base.redaction import redact


def silence_stdout() -> None:
    """Point stdout at /dev/null after its reader went away, so the exit flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


class RedactingStream:
    """A text stream (stderr) that writes everything with the known secrets redacted (:mod:`tui.base.redaction`);
    the rest of the stream's interface passes through."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(redact(text))

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def redacted_stderr() -> Iterator[None]:
    """While inside, ``sys.stderr`` redacts known secrets (every line a command prints or a traceback)."""
    original = sys.stderr
    if isinstance(original, RedactingStream):
        yield
        return
    sys.stderr = RedactingStream(original)
    try:
        yield
    finally:
        sys.stderr = original
