"""Child process for the first-frame benchmark: start the app as ``deep-tui`` does, headless.

Prints ``FRAME`` when the first screen is mounted and painted (the prompt takes
input from then on) and ``READY`` when the session has opened in the background.
The parent times both from spawning this interpreter.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from pathlib import Path


async def _show(data_dir: str, size: tuple[int, int]) -> None:
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    gc.disable()  # as tui.cli does for the app (which enables it again once the session is open)
    from tui.agent.session.request import SessionRequest
    from tui.app.app import DeepTuiApp
    from tui.base.config import Settings
    from tui.base.paths import DataDir
    from tui.cli.launch import LaunchContext, open_session

    class TimedApp(DeepTuiApp):
        # Textual runs DeepTuiApp.on_mount too (handlers are called for each class): do not call super().
        def on_mount(self) -> None:
            self.call_after_refresh(lambda: print("FRAME", flush=True))

    context = LaunchContext(Settings(), DataDir(Path(data_dir)), Path.cwd(), "offline")
    app = TimedApp.opening(settings=context.settings, memory_path=context.data_dir.memory_file(),
                             data_root=context.data_dir.root,
                             opener=lambda: open_session(context, SessionRequest()))
    async with app.run_test(headless=True, size=size) as pilot:
        while app.factory is None:
            await asyncio.sleep(0.005)
        await pilot.pause()
        print("READY", flush=True)
    await app.runtime.aclose()


if __name__ == "__main__":
    asyncio.run(_show(sys.argv[1], (120, 36)))
