"""While a turn runs a line shows it is alive (spinner, seconds, tokens so far); it goes when the turn ends."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.app.app_support import armed_dialog, gated_model, make_app, make_factory, wait_idle, wait_until
from tui.agent.turn_events import TextDelta, ToolCallFinished, ToolCallStarted
from tui.app.widgets import turn_activity
from tui.app.widgets.turn_activity import TurnActivity, elapsed


@pytest.fixture(autouse=True)
def _real_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests watch the seconds count (tests/app/conftest.py holds the clock still for the others)."""
    monkeypatch.setattr(turn_activity, "clock", time.monotonic)


def test_elapsed_is_to_the_second() -> None:
    assert [elapsed(s) for s in (0, 7.9, 59.99, 65, 3600)] == ["0 s", "7 s", "59 s", "1 min 05 s", "60 min 00 s"]


async def test_the_activity_line_counts_while_the_turn_runs_and_goes_after(tmp_path: Path) -> None:
    model, gate = gated_model("a" * 400)
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(80, 24)) as pilot:
        activity = app.query_one(TurnActivity)
        assert activity.text == ""
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: "≈100 tokens" in activity.text, "the tokens received so far")
        assert "working 0 s" in activity.text or "working 1 s" in activity.text
        assert activity.text.endswith("esc cancels")
        await wait_until(pilot, lambda: "working 1 s" in activity.text, "the seconds counting")
        gate.set()
        await wait_idle(app, pilot)
        assert activity.text == "" and not activity.display


async def test_a_running_tool_is_named_and_cancel_clears_the_line(tmp_path: Path) -> None:
    model, _gate = gated_model("first")
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(80, 24)) as pilot:
        activity = app.query_one(TurnActivity)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: activity.display, "the activity line")
        activity.count(ToolCallStarted("c1", "grep", '{"pattern": "x"}'))
        activity.count(TextDelta("x"))
        await wait_until(pilot, lambda: "grep" in activity.text, "the tool at work")
        activity.count(ToolCallFinished("c1", "grep", "", 0))
        await wait_until(pilot, lambda: "grep" not in activity.text, "the tool done")
        await pilot.press("escape")
        await wait_idle(app, pilot)
        assert not activity.display


async def test_the_seconds_ticking_repaint_the_line_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each tick (4 a second) repaints the one line; a layout of the whole screen would cost a full reflow of the
    chat each time, CPU taken from the stream being shown."""
    model, gate = gated_model("a" * 400)
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(80, 24)) as pilot:
        activity = app.query_one(TurnActivity)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: "≈100 tokens" in activity.text, "the line")
        layouts: list[bool] = []
        refresh = activity.refresh

        def spy(*regions, **options):  # type: ignore[no-untyped-def]
            layouts.append(bool(options.get("layout")))
            return refresh(*regions, **options)

        monkeypatch.setattr(activity, "refresh", spy)
        await wait_until(pilot, lambda: len(layouts) >= 3, "a few ticks")
        assert not any(layouts), "a tick asked for a layout of the screen"
        gate.set()
        await wait_idle(app, pilot)


async def test_while_an_approval_dialog_is_open_the_line_says_the_turn_waits_for_the_user(tmp_path: Path) -> None:
    from tui.app.screens.write_approval import WriteApprovalScreen

    app = make_app(make_factory(tmp_path))  # the offline model; writes ask
    async with app.run_test(size=(80, 24)) as pilot:
        activity = app.query_one(TurnActivity)
        await pilot.press(*"write new.txt hello", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, WriteApprovalScreen), "the approval dialog")
        await wait_until(pilot, lambda: "waiting for your answer" in activity.text, "the line to say so")
        assert "working" not in activity.text
        await armed_dialog(pilot, WriteApprovalScreen, "the approval dialog")  # no key answers it before
        await pilot.press("escape")  # denied: the turn goes on, and the line says it works again or is gone
        await wait_until(pilot, lambda: "waiting for your answer" not in activity.text, "the line to change")
        await wait_idle(app, pilot)
