"""``/export [FILE]``: the session written to a file (Markdown, or JSON for a ``.json`` name), the path shown.

The export reads messages.json, so it runs in a thread: a long session never stalls the chat. Without a file
name it goes to ``<data-dir>/exports/<id>-<time>.md``; a relative name is taken from the current directory. A file
that is there already (a project file, say) is replaced only once the user says so.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.base.paths import DataDir

if TYPE_CHECKING:
    from textual.screen import Screen

    from tui.agent.runtime_api import SessionRuntimeAPI

logger = logging.getLogger(__name__)


def export_target(argument: str) -> Path | None:
    """The file ``/export ARGUMENT`` writes (``None``: the default place under the data directory)."""
    return Path(argument.strip()).expanduser() if argument.strip() else None


def existing_file(argument: str) -> Path | None:
    """The file ``/export ARGUMENT`` would replace, if one is there (a link is refused by the export itself)."""
    target = export_target(argument)
    if target is None or target.is_symlink() or not target.is_file():
        return None
    return target.absolute()


async def export_current(runtime: SessionRuntimeAPI, argument: str) -> tuple[str, bool]:
    """Export ``runtime``'s session; returns the line to show and whether it is an error."""
    from tui.store.export import export_to_file
    from tui.store.store_errors import StoreError

    target = export_target(argument)
    try:
        path = await asyncio.to_thread(export_to_file, DataDir(runtime.data_root), runtime.info.session_id, target)
    except (OSError, StoreError) as error:
        logger.warning("export failed: %s", error)
        return f"Export failed: {error}", True
    return f"Exported this session to {path}", False


def start_export(screen: Screen[Any], runtime: SessionRuntimeAPI, argument: str) -> None:
    """``/export [FILE]`` on ``screen``: written in a worker, the path (or why not) shown when done; a file that
    exists is replaced only after the user confirms (No leaves it as it was, and says so)."""

    async def run() -> None:
        line, failed = await export_current(runtime, argument)
        screen.notify(line, severity="error" if failed else "information", timeout=10, markup=False)

    replaced = existing_file(argument)
    if replaced is None:
        screen.run_worker(run(), group="export")
        return
    from tui.app.screens.basic_dialogs import ConfirmModal
    from tui.text.terminal_text import visible

    shown = visible(str(replaced))

    def answered(replace: bool | None) -> None:
        if replace:
            screen.run_worker(run(), group="export")
        else:
            screen.notify(f"Not exported: {shown} is left as it was", timeout=5, markup=False)

    question = f"{shown} exists. Replace it with this session's export?"
    screen.app.push_screen(ConfirmModal("Replace a file?", question, confirm_label="Replace", destructive=True),
                           answered)
