"""/rewind and Esc Esc in the app: a prompt that wrote a file is marked (↺); Esc Esc in the empty prompt opens the
rewind dialog, the code restore puts the file back and says so; /rewind with both forks and shows the fork."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from textual.pilot import Pilot

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.app.app import DeepTuiApp
from tui.app.screens.rewind_dialog import RewindDialog
from tui.app.widgets.chat_blocks import UserBlock


def writer() -> FunctionModel:
    """Each prompt rewrites notes.txt, then answers."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            yield "written"
            return
        yield {0: DeltaToolCall(name="write_file", json_args=json.dumps({"path": "notes.txt", "content": "rewritten\n"}),
                                tool_call_id=f"call-{len(messages)}")}

    return FunctionModel(stream_function=stream, model_name="writer")


async def test_esc_esc_then_restore_code(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=writer(), writes="always"))
    notes = tmp_path / "work" / "notes.txt"
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(app, pilot)
        await pilot.press(*"rewrite it", "enter")
        await wait_idle(app, pilot)
        assert notes.read_text() == "rewritten\n"
        await wait_until(pilot, lambda: any(block.restore_point for block in app.screen.query(UserBlock)),
                         "the prompt's mark")
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindDialog), "the rewind dialog")
        dialog = app.screen
        await wait_until(pilot, lambda: dialog.points, "the restore points")
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog.has_class("-planned"), "the plan")
        await pilot.click("#code")
        await wait_until(pilot, lambda: notes.read_text() == "alpha\nbeta\n", "the file restored")
        await wait_until(pilot, lambda: any("rewind: 1 file back to before message 1" in str(n.message)
                                            for n in app._notifications), "the notice")

async def rewind_both(app: DeepTuiApp, pilot: Pilot[int]) -> None:
    """``/rewind``, the newest restore point planned, then "both" (files and conversation: a fork) clicked."""
    await pilot.press(*"/rewind", "enter")
    await wait_until(pilot, lambda: isinstance(app.screen, RewindDialog), "the rewind dialog")
    dialog = app.screen
    await wait_until(pilot, lambda: dialog.points, "the restore points")
    await pilot.press("enter")
    await wait_until(pilot, lambda: dialog.has_class("-planned"), "the plan")
    await pilot.click("#both")


async def test_slash_rewind_with_both_shows_the_fork(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=writer(), writes="always"))
    notes = tmp_path / "work" / "notes.txt"
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(app, pilot)
        await pilot.press(*"rewrite it", "enter")
        await wait_idle(app, pilot)
        original = app.main_screen.state.runtime.info.session_id
        await rewind_both(app, pilot)
        await wait_until(pilot, lambda: app.main_screen.state.runtime.info.session_id != original, "the fork")
        assert notes.read_text() == "alpha\nbeta\n"
        assert app.main_screen.state.runtime.info.parent == original


async def test_quitting_while_the_fork_is_being_shown_is_quiet(tmp_path: Path) -> None:
    """The app closing while a rewind's fork is still being switched to (the previous session closing) cancels
    the switch; the rewind that waits on it stops without an error (no traceback on that quit)."""
    import asyncio

    app = make_app(make_factory(tmp_path, chat_model=writer(), writes="always"))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(app, pilot)
        await pilot.press(*"rewrite it", "enter")
        await wait_idle(app, pilot)
        runtime = app.main_screen.state.runtime
        original = runtime.info.session_id
        closing = asyncio.Event()
        real_close = runtime.aclose

        async def slow_close() -> None:
            closing.set()
            await asyncio.Event().wait()  # never done: the app quits while the switch waits here
            await real_close()

        runtime.aclose = slow_close  # type: ignore[method-assign]
        await rewind_both(app, pilot)
        await wait_until(pilot, closing.is_set, "the previous session closing")
        assert app.main_screen.state.runtime.info.session_id != original
        await real_close()  # what the cancelled switch left undone (the test's own tidy-up)
