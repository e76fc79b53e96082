"""The first five minutes in a small terminal: the gauge is the last thing on the status row to lose space."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button

from tests.app.app_support import (
    compact_dialog_opened,
    make_app,
    make_factory,
    read_spec_three_times,
    spec_factory,
    wait_until,
)
from tests.search.support import exchange
from tui.agent.session.factory import SessionRequest
from tui.app.widgets.cost_meter import CostMeter
from tui.app.widgets.gauge import ContextGauge
from tui.app.widgets.status_fit import CANDIDATES, StatusFit, fit_status
from tui.app.widgets.turn_activity import TurnActivity
from tui.chain.events import UsageEvent
from tui.store.cost_totals import CostTotals


@pytest.fixture(autouse=True)
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Session ids show in the title bar: the same ones in every run."""
    import itertools

    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")


USAGE = UsageEvent(tokens=122_000, window=200_000, window_source="model", reserve=16_000, margin=10_000)


def _widths(gauge_bar_extra: int = 30, cost_both: int = 27, cost_session: int = 15) -> dict[str, object]:
    def gauge(form: object) -> int:
        return {"figures": 16, "percent": 5}.get(form, (form if isinstance(form, int) else 0) + gauge_bar_extra)  # type: ignore[call-overload]

    def cost(form: object) -> int:
        return {"both": cost_both, "session": cost_session, "none": 0}[form]  # type: ignore[index]

    return {"gauge_width": gauge, "cost_width": cost, "button_width": 14}


@pytest.mark.parametrize(("width", "expected"), [
    (200, StatusFit(30, "both", True)),
    (89, StatusFit(30, "session", True)),
    (79, StatusFit(20, "session", True)),
    (74, StatusFit(30, "none", True)),
    (60, StatusFit(16, "none", True)),
    (40, StatusFit("figures", "none", True)),
    (20, StatusFit("figures", "none", False)),
    (10, StatusFit("percent", "none", False)),
    (2, StatusFit("percent", "none", False)),
])
def test_the_cost_gives_way_before_the_gauge(width: int, expected: StatusFit) -> None:
    assert fit_status(width, **_widths()) == expected  # type: ignore[arg-type]


def test_every_candidate_keeps_at_least_the_percent() -> None:
    assert all(candidate.gauge != "none" for candidate in CANDIDATES)
    bars = [c.gauge for c in CANDIDATES if isinstance(c.gauge, int)]
    assert min(bars) >= 16 and CANDIDATES[-1].gauge == "percent"


def priced_app(tmp_path: Path):  # type: ignore[no-untyped-def]
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="anthropic:claude-sonnet-4-5")
    handle.append_messages(exchange("what did this cost?", "about a dollar"))
    totals = CostTotals()
    totals.add(input_usd=0.11, cached_input_usd=0.0, output_usd=0.05)
    handle.record_cost(totals)
    handle.close()
    return make_app(factory, SessionRequest(resume=handle.id))


@pytest.mark.parametrize(("size", "bar", "cost"), [((120, 24), True, "session $0.16"), ((80, 24), True, "session $0.16"),
                                                   ((60, 20), True, "")])
async def test_the_gauge_line_at_each_size(tmp_path: Path, size: tuple[int, int], bar: bool, cost: str) -> None:
    app = priced_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        app.usage = USAGE
        gauge = app.query_one(ContextGauge)
        await wait_until(pilot, lambda: gauge.usage is USAGE, "the gauge")
        await pilot.pause()
        text = str(gauge.render())
        assert "61%" in text and "122k" in text and "200k" in text
        assert ("█" in text) is bar
        meter = app.query_one(CostMeter)
        assert (str(meter.render()) if meter.display else "") == cost
        row = app.query_one("#status")
        used = sum(child.outer_size.width for child in row.children if child.display)
        assert used <= size[0]
        assert app.query_one("#compact-button", Button).display


def test_gauge_line_80x24_snapshot(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def set_usage(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.usage = USAGE
        await wait_until(pilot, lambda: pilot.app.query_one(ContextGauge).usage is USAGE, "the gauge")
        await pilot.pause()

    assert snap_compare(priced_app(tmp_path), terminal_size=(80, 24), run_before=set_usage)


def test_gauge_line_60x20_snapshot(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def set_usage(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.usage = USAGE
        await wait_until(pilot, lambda: pilot.app.query_one(ContextGauge).usage is USAGE, "the gauge")
        await pilot.pause()

    assert snap_compare(priced_app(tmp_path), terminal_size=(60, 20), run_before=set_usage)


SMALL = [(80, 24), (60, 20)]


@pytest.mark.parametrize("size", SMALL, ids=["80x24", "60x20"])
def test_write_approval_dialog_keeps_its_buttons(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    from tui.app.screens.write_approval import WriteApprovalScreen

    async def ask(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press(*"write new.txt hello", "enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, WriteApprovalScreen), "the approval dialog")
        # the turn's line says what it waits on as the dialog opens, not at its next tick (CI once caught it between)
        activity = pilot.app.query_one(TurnActivity)
        assert "waiting for your answer" in activity.text, activity.text
        await pilot.pause()
        for button in pilot.app.screen.query(Button):  # every answer is on screen, whole
            region = button.region
            assert region.width and region.height and pilot.app.screen.region.contains_region(region), button.id

    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=size, run_before=ask)


@pytest.mark.parametrize("size", SMALL, ids=["80x24", "60x20"])
async def test_a_long_write_scrolls_in_its_dialog_and_the_buttons_stay(tmp_path: Path, size: tuple[int, int]) -> None:
    """A 40-line new file: its preview scrolls inside the dialog, every answer stays whole on screen, also after
    the terminal shrinks from 120x36 while the dialog is open."""
    from tui.app.screens.write_approval import WriteApprovalScreen

    def buttons_on_screen(screen: WriteApprovalScreen) -> None:
        for button in screen.query(Button):
            region = button.region
            assert region.width and region.height and screen.region.contains_region(region), button.id

    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"write plan.md", "ctrl+j")
        for number in range(40):
            await pilot.press(*f"line {number}", "ctrl+j")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, WriteApprovalScreen), "the approval dialog")
        await pilot.pause(0.1)
        screen = app.screen
        assert isinstance(screen, WriteApprovalScreen)
        buttons_on_screen(screen)
        await pilot.resize_terminal(*size)
        await pilot.pause(0.2)
        buttons_on_screen(screen)
        body = screen.query_one("#approval-body")
        assert body.max_scroll_y > 0 and body.region.height >= 3  # the preview scrolls, and some of it shows


@pytest.mark.parametrize("size", SMALL, ids=["80x24", "60x20"])
def test_picker_gives_titles_the_room(snap_compare, tmp_path: Path, size: tuple[int, int],
                                      monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from tui.app.screens.session_picker import SessionPickerScreen

    monkeypatch.setattr("tui.app.screens.session_picker.time.time", lambda: 2_000_000_000.0)
    monkeypatch.setattr("tui.store.meta.time.time", lambda: 2_000_000_000.0 - 120)
    monkeypatch.setattr("tui.store.handle.time.time", lambda: 2_000_000_000.0 - 120)
    factory = make_factory(tmp_path)
    for title in ("refactor the tokenizer to handle CRLF input", "second experiment"):
        handle = factory.store.create(model="anthropic:claude-sonnet-4-5")
        handle.append_messages(exchange(title, "done"))
        handle.close()

    async def open_picker(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionPickerScreen), "the picker")
        await pilot.pause(0.3)
        columns = str(pilot.app.screen.query_one("#columns").render())
        assert "model" not in columns and "title" in columns  # the model gave way to the titles

    assert snap_compare(make_app(factory), terminal_size=size, run_before=open_picker)


@pytest.mark.parametrize("size", SMALL, ids=["80x24", "60x20"])
async def test_the_compact_dialog_keeps_its_buttons_after_a_run(tmp_path: Path, size: tuple[int, int]) -> None:
    from tui.app.screens.compact_dialog import CompactDialog
    from tui.chain.events import CompactionFinished

    app = make_app(spec_factory(tmp_path))
    async with app.run_test(size=size) as pilot:
        await read_spec_three_times(app, pilot)
        await pilot.press("ctrl+g")
        dialog = await compact_dialog_opened(app, pilot)
        await pilot.click("#run")
        await wait_until(pilot, lambda: dialog.result is not None, "the compaction")
        await pilot.pause()
        assert isinstance(dialog.result, CompactionFinished)
        for button_id in ("#run", "#close"):
            button = dialog.query_one(button_id, Button)
            assert dialog.region.contains_region(button.region) and button.region.height == 1, button_id
        assert "Compacted" in str(dialog.query_one("#result").render())
        await pilot.click("#close")
        await wait_until(pilot, lambda: not isinstance(app.screen, CompactDialog), "the dialog to close")
