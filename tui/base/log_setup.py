"""Where deep-tui's log goes: ``<data>/deep-tui.log`` (rotated), never the terminal under the app.

Without this, Python prints warnings of loggers that have no handler (e.g. "skipped 2 unreadable
lines" from the event store) straight to stderr, which lands beneath the full-screen UI. The app
adds a Textual handler as well (``textual console`` shows the same records while it runs). Known
secrets (a key a provider echoed in an error) are redacted from every record (:mod:`tui.base.redaction`).
"""

from __future__ import annotations

import logging
import os
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from tui.base.nofollow import LinkRefusedError, check_no_links, make_data_root, open_file
from tui.base.redaction import redact

__all__ = ["LOG_BACKUPS", "LOG_FILE_NAME", "LOG_MAX_BYTES", "RedactingFormatter", "configure_logging", "log_path"]

LOG_FILE_NAME = "deep-tui.log"
LOG_MAX_BYTES = 1_000_000
"""The log is rotated past this size …"""
LOG_BACKUPS = 3
"""… keeping this many older files (``deep-tui.log.1`` … ``.3``)."""

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
_MARK = "_deep_tui_handler"
"""Set on the handlers installed here, so configuring again replaces them instead of adding more."""


class _FileHandler(RotatingFileHandler):
    """Opens (and creates the data directory for) the log only when the first record arrives, so a
    command that fails before logging anything leaves nothing on disk. The log is opened without
    following a link (a planted ``deep-tui.log`` link is refused, never appended to)."""

    def _open(self):  # type: ignore[no-untyped-def]
        path = Path(self.baseFilename)
        make_data_root(path.parent)
        descriptor = open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        return open(descriptor, "a", encoding=self.encoding, errors=self.errors)


class RedactingFormatter(logging.Formatter):
    """The whole record as written (message, arguments, traceback) with known secrets redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class _StderrFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(f"deep-tui: {record.levelname.lower()}: {record.getMessage()}")


def log_path(data_root: Path) -> Path:
    """The log file of a data directory."""
    return data_root / LOG_FILE_NAME


def _link_refusal(path: Path) -> str | None:
    """Why the log cannot be used (it, or a directory on the way, is a planted link); ``None`` when it can.
    Rotation renames over its older copies, which replaces a link there without following it."""
    try:
        check_no_links(path)
    except LinkRefusedError as error:
        return str(error)
    return None


def configure_logging(data_root: Path, *, debug: bool = False, stderr: bool = False) -> Path:
    """Log to ``<data_root>/deep-tui.log`` at INFO (DEBUG with ``debug``); returns the file's path.

    ``stderr`` also prints warnings and errors on stderr — for the headless commands only; the app
    never writes to the terminal it draws on. Python's ``warnings`` are routed into the log too.
    Calling it again replaces the handlers installed by the previous call.
    """
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(handler)
        handler.close()
    path = log_path(data_root)
    handlers: list[logging.Handler] = []
    refusal = _link_refusal(path)
    if refusal is None:
        file_handler = _FileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8",
                                    delay=True)
        file_handler.setFormatter(RedactingFormatter(_FORMAT))
        handlers.append(file_handler)
    else:  # said once, before any UI: nothing is logged to a file this run
        print(f"deep-tui: warning: {refusal}; no log file is kept this run", file=sys.stderr)
    if stderr:
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(logging.WARNING)
        console.setFormatter(_StderrFormatter())
        handlers.append(console)
    for handler in handlers:
        setattr(handler, _MARK, True)
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    # Noise even when debugging: a line per Markdown parsing step; and watchfiles reports every change it
    # sees — including this log file's own growth when it watches the data directory, a feedback loop.
    for name in ("markdown_it", "asyncio", "watchfiles"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.captureWarnings(True)
    return path
