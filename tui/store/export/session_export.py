"""Export one recorded session to text or to a file: what ``deep-tui export`` and ``/export`` both call."""

from __future__ import annotations

import time
from pathlib import Path

from tui.base.atomic import write_atomic
from tui.base.paths import DataDir
from tui.store.export.document import read_document
from tui.store.export.document_formats import render_json, render_markdown
from tui.store.session_store import SessionStore

EXPORTS_DIR = "exports"
"""Where ``/export`` without a file name writes, inside the data directory."""


def export_session(data_dir: DataDir, session_id: str, fmt: str) -> str:
    """The session rendered as ``md`` or ``json``. Opened read-only (no lock), so a session open in the app
    exports as recorded so far. Raises the store's errors (unknown session, unreadable files)."""
    handle = SessionStore(data_dir).open(session_id, read_only=True)
    loaded = handle.messages.load()
    warning = "; ".join(part for part in (*handle.warnings, loaded.warning or "") if part) or None
    document = read_document(handle.meta, loaded.messages, handle.directory, warning)
    return render_json(document) if fmt == "json" else render_markdown(document)


def default_export_path(data_dir: DataDir, session_id: str, fmt: str) -> Path:
    """``<data-dir>/exports/<id>-<UTC time>.md`` (or ``.json``)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return data_dir.root / EXPORTS_DIR / f"{session_id}-{stamp}.{fmt}"


def format_for(path: Path) -> str:
    """``json`` for a ``.json`` file name, else ``md``."""
    return "json" if path.suffix.lower() == ".json" else "md"


def export_to_file(data_dir: DataDir, session_id: str, target: Path | None = None) -> Path:
    """Write the session to ``target`` (its format from the suffix; default: :func:`default_export_path`),
    atomically and through no link; returns the absolute path written. Raises ``OSError`` or store errors."""
    path = target if target is not None else default_export_path(data_dir, session_id, "md")
    write_atomic(path, export_session(data_dir, session_id, format_for(path)))
    return path.absolute()
