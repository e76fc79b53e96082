"""UX benchmarks: the memory panel with a huge MEMORY.md (open, and Ctrl+Q with it open)."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import pydantic_ai
from common import BenchResult, info, result

import tui.app.widgets.memory_editor as memory_editor
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.widgets.memory_editor import MemoryEditor
from tui.base.config import Settings
from tui.base.paths import DataDir

pydantic_ai.BANNER_ENABLED = False
HUGE_BYTES = 10 * 1024 * 1024
RUNS = 5


def _app(root: Path) -> DeepTuiApp:
    (root / "work").mkdir(exist_ok=True)
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(root / "data"), workdir=root / "work",
                             choice=choose_model("offline", None))
    runtime = factory.open_request_sync(SessionRequest())
    return DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)


async def _open_and_quit_ms(root: Path, memory_text: str) -> tuple[float, float]:
    """Ctrl+O until the panel shows MEMORY.md, then Ctrl+Q until the app has ended."""
    memory = root / "data" / "main" / "MEMORY.md"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text(memory_text, encoding="utf-8")
    app = _app(root)
    async with app.run_test(headless=True, size=(120, 36)) as pilot:
        await pilot.pause(0.2)
        editor = app.query_one(MemoryEditor)
        start = time.perf_counter()
        await pilot.press("ctrl+o")
        while not (editor.text_area.has_focus and editor.text):
            await asyncio.sleep(0.001)
        await pilot.pause()  # painted
        opened = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        await pilot.press("ctrl+q")
    quit_ms = (time.perf_counter() - start) * 1000
    await app.runtime.aclose()
    return opened, quit_ms


def _runs(memory_text: str, runs: int = RUNS) -> tuple[list[float], list[float]]:
    opened: list[float] = []
    quit_ms: list[float] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as directory:
            open_ms, end_ms = asyncio.run(_open_and_quit_ms(Path(directory), memory_text))
        opened.append(open_ms)
        quit_ms.append(end_ms)
    return opened, quit_ms


def main() -> list[BenchResult]:
    huge = "- an enormous memory line " * (HUGE_BYTES // 26)  # one 10 MB line, as in issue 8
    opened, quit_ms = _runs(huge)
    figures = [
        result("memory panel: open with a 10 MB one-line MEMORY.md (read-only view)", statistics.median(opened),
               "ms", 500.0),
        result("quit (Ctrl+Q) with that panel open", statistics.median(quit_ms), "ms", 1000.0),
    ]
    editable = "- a memory line that is editable here\n" * (memory_editor.MAX_EDIT_BYTES // 38)
    opened, quit_ms = _runs(editable, runs=3)
    figures.append(info(f"  for scale: open with the largest editable MEMORY.md ({memory_editor.MAX_EDIT_BYTES // 1024} KiB)",
                        statistics.median(opened), "ms"))
    figures.append(info("  for scale: quit with it open", statistics.median(quit_ms), "ms"))
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
