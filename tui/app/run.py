"""Start the Textual app for the session the command line asked for."""

from __future__ import annotations

import asyncio

from tui.agent.runtime import RuntimeFactory, SessionRequest


def run_app(factory: RuntimeFactory, request: SessionRequest) -> int:
    """Open the session (errors surface before the screen takes over), run the app, release the session."""
    runtime = factory.open_request_sync(request)
    from tui.app.shell import DeepTuiApp

    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    try:
        app.run()
    finally:
        current = getattr(app, "runtime", runtime)
        asyncio.run(current.aclose())
    return app.return_code or 0
