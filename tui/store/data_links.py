"""Links planted where deep-tui keeps its own files, said once when a session opens.

Every open under the data directory refuses a link by itself (:mod:`tui.base.nofollow`); a refusal that
is not fatal (MEMORY.md, saved outputs, the search index, the prompt history…) would otherwise only
reach the log. This lists them so the app shows a notification and ``deep-tui run`` a stderr line
per link, each naming it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tui.base.nofollow import LinkRefusedError
from tui.base.paths import DataDir

_INDEX_FILES = ("index.sqlite", "index.sqlite-journal", "index.sqlite-wal", "index.sqlite-shm")
_CALIBRATION_FILE = "token_calibration.json"
"""``tui.chain.calibration.CALIBRATION_FILE_NAME`` (the chain is a sibling layer: not imported here)."""
_SESSION_ENTRIES = ("lock", "messages.json", "session.json", "events.jsonl", "prompt_history.jsonl")


def planted_links(data_dir: DataDir, *, agent_name: str, session_id: str | None = None) -> list[str]:
    """One line per symbolic link found where deep-tui keeps a file or directory of its own (none were
    followed). Checks the data directory's own names, ``<agent>/``, ``mcp-logs/`` and the logs in it, and,
    given ``session_id``, that session's directory."""
    root = data_dir.root
    memory = data_dir.memory_file(agent_name)
    # deep-tui.log is not listed: configure_logging says it is refused before anything else runs.
    places = [data_dir.config_file, data_dir.sessions_dir, data_dir.large_results_dir,
              root / _CALIBRATION_FILE, *(root / name for name in _INDEX_FILES),
              memory.parent, memory, memory.with_name(f".{memory.name}.lock")]
    if session_id is not None:
        session = data_dir.session_dir(session_id)
        places.append(session)
        places.extend(session / name for name in _SESSION_ENTRIES)
    places.extend(_links_in(data_dir.mcp_logs_dir))
    return [str(LinkRefusedError(place)) for place in places if _is_link(place)]


def _links_in(directory: Path) -> list[Path]:
    """The links directly inside ``directory`` (when it is a directory, not a link: that one is listed itself)."""
    if _is_link(directory):
        return [directory]
    try:
        with os.scandir(directory) as entries:
            return [Path(entry.path) for entry in entries if entry.is_symlink()]
    except OSError:  # missing, or not a directory
        return []


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:  # missing (or below a link, which is itself listed)
        return False
