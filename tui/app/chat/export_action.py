"""``/export [FILE]``: the session written to a file (Markdown, or JSON for a ``.json`` name), the path shown.

The export reads messages.json, so it runs in a thread: a long session never stalls the chat. Without a file
name it goes to ``<data-dir>/exports/<id>-<time>.md``; a relative name is taken from the current directory.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from tui.agent.runtime_api import SessionRuntimeAPI
from tui.base.paths import DataDir

logger = logging.getLogger(__name__)


async def export_current(runtime: SessionRuntimeAPI, argument: str) -> tuple[str, bool]:
    """Export ``runtime``'s session; returns the line to show and whether it is an error."""
    from tui.store.export import export_to_file
    from tui.store.store_errors import StoreError

    target = Path(argument.strip()).expanduser() if argument.strip() else None
    try:
        path = await asyncio.to_thread(export_to_file, DataDir(runtime.data_root), runtime.info.session_id, target)
    except (OSError, StoreError) as error:
        logger.warning("export failed: %s", error)
        return f"Export failed: {error}", True
    return f"Exported this session to {path}", False
