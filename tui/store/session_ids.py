"""Session ids on disk and prefix resolution, without pydantic-ai (the launcher checks ``--resume``
with it before drawing anything)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tui.base.nofollow import LinkRefusedError, check_no_links
from tui.store.store_errors import AmbiguousSessionError, LinkedPathError, UnknownSessionError

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
"""A session directory name deep-tui will open (12 hex chars for its own; adopted sessions vary)."""


def list_session_ids(sessions_dir: Path) -> list[str]:
    """Names of the session directories under ``sessions_dir`` (none when it does not exist).

    ``sessions_dir`` (or a directory above it in the data directory) being a link is refused with a
    :class:`LinkedPathError`; a session directory that is a link is listed, and refused when opened."""
    try:
        check_no_links(sessions_dir)
    except LinkRefusedError as error:
        raise LinkedPathError(str(error)) from None
    if not sessions_dir.is_dir():
        return []
    return [entry.name for entry in os.scandir(sessions_dir)
            if entry.is_dir() and SESSION_ID_PATTERN.match(entry.name)]


def resolve_prefix(ids: list[str], prefix: str, sessions_dir: Path) -> str:
    """The id in ``ids`` that is ``prefix`` or uniquely starts with it; otherwise a store error saying why."""
    if not prefix or not SESSION_ID_PATTERN.match(prefix):
        raise UnknownSessionError(f"no session matches {prefix!r}")
    if prefix in ids:
        return prefix
    matches = sorted(session_id for session_id in ids if session_id.startswith(prefix))
    if not matches:
        raise UnknownSessionError(f"no session matches {prefix!r} in {sessions_dir}")
    if len(matches) > 1:
        shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
        raise AmbiguousSessionError(f"{prefix!r} is ambiguous: it matches {shown}")
    return matches[0]
