"""Start the Textual app: paint first, open the session in the background."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.agent.session_request import SessionRequest

if TYPE_CHECKING:
    from tui.launch import LaunchContext


def run_app(context: LaunchContext, request: SessionRequest) -> int:
    """Show the screen at once; the session (model, lock, history) opens in a worker thread.

    A failure there (unknown id, locked session, unknown model, missing key) ends the
    app with its one-line message and exit status 2, and changes nothing on disk.
    """
    import asyncio
    import sys

    from tui.app.shell import DeepTuiApp
    from tui.launch import open_session

    app = DeepTuiApp.opening(
        settings=context.settings,
        memory_path=context.data_dir.memory_file(context.settings.agent_name),
        data_root=context.data_dir.root,
        opener=lambda: open_session(context, request),
    )
    try:
        app.run()
    finally:
        asyncio.run(app.runtime.aclose())
    if app.startup_error:
        print(f"deep-tui: error: {app.startup_error}", file=sys.stderr)
    return app.return_code or 0
