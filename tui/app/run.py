"""Start the Textual app: paint first (with the session's last messages when one is resumed), open the
session in the background."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.agent.session.request import SessionRequest
    from tui.app.opening import SessionOpener
    from tui.base.config import Settings
    from tui.base.paths import DataDir
    from tui.store.session_tail import SessionTail
    from tui.trust.project import TrustDecider

logger = logging.getLogger(__name__)


def run_app(settings: Settings, data_dir: DataDir, request: SessionRequest, *, opener: SessionOpener,
            served: bool = False, trust: TrustDecider | None = None) -> int:
    """Show the screen at once; ``opener`` opens the session (model, lock, history) in a worker thread.

    With ``trust`` (an untrusted project config), the app asks about it first and opens the session after,
    with the settings the answer gives.

    A failure there (unknown id, locked session, unknown model, missing key) ends the
    app with its one-line message and exit status 2, and changes nothing on disk. ``served``: the app runs
    in a browser tab (``deep-tui serve``), where stderr is nobody's: the message is shown in the page first.
    """
    import asyncio
    import sys

    from tui.app.app import DeepTuiApp

    app = DeepTuiApp.opening(
        settings=settings,
        memory_path=data_dir.memory_file(settings.agent_name),
        data_root=data_dir.root,
        opener=opener,
        tail=opening_tail(data_dir, request),
        served=served,
        trust=trust,
    )
    try:
        app.run()
    finally:
        asyncio.run(app.runtime.aclose())
        app.stop_signals.disarm()
    if app.startup_error:
        print(f"deep-tui: error: {app.startup_error}", file=sys.stderr)
    return app.return_code or 0


def opening_tail(data_dir: DataDir, request: SessionRequest) -> SessionTail | None:
    """The last page of the session ``--resume``/``--continue`` names, read without pydantic-ai so the
    first frame can show it; ``None`` for a new session or when the session is not clear yet."""
    if not (request.resume or request.continue_latest):
        return None  # a new session: nothing to show yet
    from tui.app.widgets.chat_view import PAGE_SIZE
    from tui.store.session_tail import find_session_id, read_session_tail

    session_id = find_session_id(data_dir, resume=request.resume, continue_latest=request.continue_latest)
    if session_id is None:
        return None
    tail = read_session_tail(data_dir, session_id, PAGE_SIZE)
    logger.debug("showing %d messages of session %s while it opens", len(tail.records), session_id)
    return tail
