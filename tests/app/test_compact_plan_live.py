"""The compact dialog's preview stays true while it is open: after a run it says what a next run would do, and a
turn that ends meanwhile (the dialog opened while it ran) is counted in."""

from __future__ import annotations

from pathlib import Path

from tests.app.app_support import (
    app_on_a_long_session,
    compact_dialog_opened,
    gated_model,
    make_app,
    read_spec_three_times,
    spec_factory,
    wait_idle,
    wait_until,
)
from tui.app.app import DeepTuiApp
from tui.chain.events import CompactionFinished


def _plan(app: DeepTuiApp) -> str:
    return str(app.screen.query_one("#plan").render())


async def test_the_preview_is_refreshed_after_a_run(tmp_path: Path) -> None:
    app = make_app(spec_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await read_spec_three_times(app, pilot)
        await pilot.click("#compact-button")
        dialog = await compact_dialog_opened(app, pilot)
        before = _plan(app)
        assert "Will summarize" in before and "earlier summary" not in before
        await pilot.click("#run")
        await wait_until(pilot, lambda: dialog.result is not None, "the compaction")
        assert isinstance(dialog.result, CompactionFinished), dialog.result
        await wait_until(pilot, lambda: _plan(app) != before, "the preview to follow the new history")
        after = _plan(app)
        assert after == str(dialog.query_one("#plan").render())
        assert "earlier summary" in after or "Nothing to summarize yet" in after, after


async def test_a_turn_that_ends_while_the_dialog_is_open_is_counted_in(tmp_path: Path) -> None:
    model, gate = gated_model("a long answer " * 50)
    app = app_on_a_long_session(tmp_path, model)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn to start")
        await pilot.press("ctrl+g")
        await compact_dialog_opened(app, pilot)
        before = _plan(app)
        gate.set()
        await wait_until(pilot, lambda: not app.runtime.busy, "the turn to end")
        await wait_until(pilot, lambda: _plan(app) != before, "the preview to count the turn")
        assert _plan(app) == str(app.screen.query_one("#plan").render())
        await pilot.press("escape")
        await wait_idle(app, pilot)
