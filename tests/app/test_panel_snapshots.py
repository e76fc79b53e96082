"""Snapshots of the side-panel widgets and the evicted-output viewer (fixed clock, paths relative to a tmp cwd)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import TextArea

from tests.app.app_support import wait_until
from tui.agent.runtime_api import EvictedOutput
from tui.app.screens.basic_dialogs import ChoiceModal
from tui.app.screens.evicted_viewer import EvictedViewerScreen
from tui.app.widgets.event_log import EventLogPanel
from tui.app.widgets.evicted_browser import EvictedBrowser
from tui.app.widgets.memory_editor import MemoryEditor
from tui.chain.events import CompactionFailed, CompactionFinished, EvictedEvent, UsageEvent

STYLES = Path(__file__).resolve().parents[2] / "styles" / "panels.tcss"
BASE = datetime(2026, 3, 4, 14, 0, 0, tzinfo=UTC).timestamp()
SnapCompare = Callable[..., bool]


class PanelApp(App[None]):
    """Mounts one panel widget, as the app's side panel would."""

    CSS_PATH = STYLES

    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


async def settle(pilot: Pilot[Any]) -> None:
    """Let finite workers (file loading; not the memory watcher) finish and stop cursors blinking."""
    finite = [worker for worker in pilot.app.workers if worker.group != "memory-watch"]
    if finite:  # an empty list would mean "wait for every worker", the endless watcher included
        await pilot.app.workers.wait_for_complete(finite)
    await pilot.pause()
    for text_area in pilot.app.screen.query(TextArea):
        text_area.cursor_blink = False
    await pilot.pause()


@pytest.fixture
def in_tmp_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in ``tmp_path`` so shown paths are relative and stable."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def memory_file(cwd: Path, text: str) -> Path:
    path = cwd / ".deep-tui" / "main" / "MEMORY.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


async def type_into_memory(pilot: Pilot[Any], row: int, text: str) -> MemoryEditor:
    """The user types ``text`` at the start of ``row`` (the buffer becomes unsaved)."""
    await settle(pilot)
    editor = pilot.app.query_one(MemoryEditor)
    editor.text_area.move_cursor((row, 0))
    editor.text_area.insert(text)
    return editor


def test_memory_editor_snapshot(snap_compare: SnapCompare, in_tmp_cwd: Path) -> None:
    path = memory_file(in_tmp_cwd, "# Memory\n\n- The user prefers `pytest -x`.\n- Project root: /srv/app\n"
                                   "- [bold] is shown literally\n")

    async def edit(pilot: Pilot[Any]) -> None:
        await type_into_memory(pilot, 5, "- Deploy with `make release`\n")
        await pilot.pause()

    assert snap_compare(PanelApp(MemoryEditor(path)), terminal_size=(60, 14), run_before=edit)


def test_memory_conflict_dialog_snapshot(snap_compare: SnapCompare, in_tmp_cwd: Path) -> None:
    path = memory_file(in_tmp_cwd, "# Memory\n\n- v1\n")

    async def conflict(pilot: Pilot[Any]) -> None:
        editor = await type_into_memory(pilot, 3, "- my unsaved line\n")
        path.write_text("# Memory\n\n- v1\n- written by the agent\n", encoding="utf-8")
        editor.external_change_detected(path.read_text(encoding="utf-8"))
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceModal), "the question")

    assert snap_compare(PanelApp(MemoryEditor(path)), terminal_size=(80, 20), run_before=conflict)


def test_event_log_snapshot(snap_compare: SnapCompare) -> None:
    events = [
        UsageEvent(timestamp=BASE, tokens=1000, window=200_000, window_source="model"),
        EvictedEvent(timestamp=BASE + 10, tool_name="read_file", tool_call_id="c1", path="/x/large_tool_results/call_1.txt",
                     tokens=48_200, size_bytes=190_000, args='{"path": "src/parser.py", "limit": 4000}'),
        CompactionFinished(
            timestamp=BASE + 30,
            strategy="summary",
            trigger="auto",
            tokens_before=170_000,
            tokens_after=40_000,
            messages_replaced=42,
            retention_score=0.92,
            missing_identifiers=("ERR_42",),
            focus="[bold]auth[/bold]",
            files_created=("notes.md",),
        ),
        CompactionFailed(timestamp=BASE + 40, strategy="summary", trigger="manual", reason="summarizer timed out", tokens=120_000),
        CompactionFinished(timestamp=BASE + 50, strategy="pointer", trigger="auto", tokens_before=150_000, tokens_after=140_000, messages_replaced=5),
    ]
    panel = EventLogPanel(events, now=lambda: BASE + 60, tz=UTC)
    assert snap_compare(PanelApp(panel), terminal_size=(60, 16), run_before=settle)


def _outputs(directory: Path) -> list[EvictedOutput]:
    directory.mkdir(parents=True, exist_ok=True)
    specs = [("bash", 12_400, 3_100, 5, '{"command": "pytest -x tests/"}'),
             ("read_file", 190_000, 48_200, 65, '{"path": "src/parser.py", "limit": 4000}'),
             ("[b]grep[/b]", 2_500_000, 610_000, 125, "")]  # saved before deep-tui recorded arguments
    outputs = []
    for index, (tool, size, tokens, offset, args) in enumerate(specs):
        path = directory / f"call_{index}.txt"
        path.write_text("x", encoding="utf-8")
        outputs.append(EvictedOutput(path=path, tool_name=tool, size_bytes=size, tokens=tokens, timestamp=BASE + offset,
                                     tool_call_id=f"call_{index}", args=args))
    return outputs


def test_evicted_browser_snapshot(snap_compare: SnapCompare, tmp_path: Path) -> None:
    browser = EvictedBrowser(_outputs(tmp_path), now=lambda: BASE + 600, tz=UTC)
    assert snap_compare(PanelApp(browser), terminal_size=(60, 12), run_before=settle)


def test_evicted_viewer_snapshot(snap_compare: SnapCompare, in_tmp_cwd: Path) -> None:
    path = in_tmp_cwd / "large_tool_results" / "call_7.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"status": "error", "items": [{"id": i, "error": i % 3 == 0} for i in range(12)]}, indent=2), encoding="utf-8")

    async def open_and_search(pilot: Pilot[Any]) -> None:
        await pilot.app.push_screen(EvictedViewerScreen(path))
        await settle(pilot)
        await pilot.press("slash", *"error")
        await pilot.press("enter")
        await pilot.pause()

    app = PanelApp(EvictedBrowser([], now=lambda: BASE, tz=UTC))
    assert snap_compare(app, terminal_size=(90, 24), run_before=open_and_search)


def test_memory_too_large_snapshot(snap_compare: SnapCompare, in_tmp_cwd: Path) -> None:
    path = memory_file(in_tmp_cwd, "- an enormous memory line " * 40_000)  # about 1 MB

    assert snap_compare(PanelApp(MemoryEditor(path)), terminal_size=(60, 14), run_before=settle)
