"""Child process for the first-frame benchmark: open a session and show the app headless.

Prints ``READY`` once the first screen is mounted and painted, then exits.
The parent times from spawning this interpreter to that line, so imports,
session opening and the first layout are all counted.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path


async def _show(data_dir: str, size: tuple[int, int]) -> None:
    import pydantic_ai

    pydantic_ai.BANNER_ENABLED = False
    from tui.agent.runtime import RuntimeFactory, SessionRequest
    from tui.app.shell import DeepTuiApp
    from tui.config import Settings
    from tui.paths import DataDir

    settings = Settings()
    factory = RuntimeFactory.create(
        settings=settings, data_dir=DataDir(Path(data_dir)), workdir=Path.cwd(), model_flag="offline"
    )
    resume = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    runtime = factory.open_request_sync(SessionRequest(resume=resume))
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=settings)
    async with app.run_test(headless=True, size=size) as pilot:
        await pilot.pause()
        print("READY", flush=True)
    await runtime.aclose()


if __name__ == "__main__":
    asyncio.run(_show(sys.argv[1], (120, 36)))
