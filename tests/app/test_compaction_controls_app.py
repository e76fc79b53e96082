"""Issue 30 point 5 in the app: /context shows and changes the automatic compaction threshold and switches automatic
compaction off for the session (each control clicked, and by key); the change is kept with the session
(session.json) over the user's config, the gauge's marks follow it; snapshots of /context, the gauge and the
question asked before a summary at 80x24."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Button

from tests.app.app_support import make_app, make_factory, wait_until
from tests.app.test_snapshots import fixed_ids_and_clock  # noqa: F401  (autouse: fixed ids and clock)
from tui.agent.session.factory import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.context_report import ContextScreen, stepped
from tui.app.screens.summary_consent import SummaryConsentScreen
from tui.app.widgets.gauge import OFF_LABEL, OFF_MARK, render_gauge
from tui.chain.events import UsageEvent

SnapCompare = Callable[..., bool]


def controls_of(app: DeepTuiApp) -> tuple[float, bool]:
    settings = app.runtime.manager.settings  # type: ignore[attr-defined]
    return settings.compaction_threshold, settings.auto_compact


def stored(app: DeepTuiApp) -> dict[str, object]:
    data = json.loads((app.runtime.handle.directory / "session.json").read_text())  # type: ignore[attr-defined]
    return {key: data.get(key) for key in ("compaction_threshold", "auto_compact")}


def state_line(app: DeepTuiApp) -> str:
    return str(app.screen.query_one("#compaction-state").render())


async def open_context(pilot, app: DeepTuiApp) -> ContextScreen:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: app.main_screen.ready, "the session")
    await pilot.press("f2")
    await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
    assert isinstance(app.screen, ContextScreen)
    return app.screen


async def test_each_control_clicked_and_by_key_is_kept_with_the_session(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    app = make_app(factory)
    session_id = app.runtime.info.session_id
    async with app.run_test(size=(80, 24)) as pilot:
        await open_context(pilot, app)
        assert controls_of(app) == (0.85, True) and "as your config sets it" in state_line(app)

        await pilot.click("#threshold-down")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.80, "the threshold down")
        assert "this session's (config: 85%, on)" in state_line(app)
        assert stored(app) == {"compaction_threshold": 0.80, "auto_compact": None}
        await wait_until(pilot, lambda: app.main_screen.usage is not None
                         and app.main_screen.usage.compaction_threshold == 0.80, "the gauge's mark moved")
        await pilot.click("#threshold-up")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.85, "the threshold up")
        up = app.screen.query_one("#threshold-up")
        await wait_until(pilot, lambda: not up.has_class("-active"), "the button ready again")  # a click is ignored before
        await pilot.click("#threshold-up")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.90, "the threshold up again")
        assert "compaction at 90%" in str(app.screen.query_one("#breakdown").render())

        await pilot.click("#auto-compact")
        await wait_until(pilot, lambda: not controls_of(app)[1], "automatic compaction off")
        assert "Turn on (a)" in str(app.screen.query_one("#auto-compact").render())
        assert "automatic compaction off" in str(app.screen.query_one("#breakdown").render())
        await wait_until(pilot, lambda: app.main_screen.usage is not None and not app.main_screen.usage.auto_compact,
                         "the gauge shows it off")
        assert stored(app) == {"compaction_threshold": 0.90, "auto_compact": False}

        await pilot.click("#compaction-reset")
        await wait_until(pilot, lambda: controls_of(app) == (0.85, True), "back to the config's")
        assert stored(app) == {"compaction_threshold": None, "auto_compact": None}
        assert app.runtime.manager.settings.summarize_threshold == 0.90  # type: ignore[attr-defined]

        await pilot.press("minus")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.80, "- lowers it")
        await pilot.press("plus")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.85, "+ raises it")
        await pilot.press("minus", "minus")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.75, "- -")
        await pilot.press("a")
        await wait_until(pilot, lambda: not controls_of(app)[1], "a switches it off")
        await pilot.click("#close")
        await wait_until(pilot, lambda: not isinstance(app.screen, ContextScreen), "closed")
        await app.runtime.aclose()

    reopened = make_app(make_factory(tmp_path), SessionRequest(resume=session_id))
    async with reopened.run_test(size=(80, 24)) as pilot:
        await open_context(pilot, reopened)
        assert controls_of(reopened) == (0.75, False)  # kept with the session, over the config's
        assert "off" in state_line(reopened) and "config: 85%, on" in state_line(reopened)
        await pilot.press("r")
        await wait_until(pilot, lambda: controls_of(reopened) == (0.85, True), "r resets")
        await pilot.press("escape")
        await reopened.runtime.aclose()


def test_the_threshold_steps_on_a_five_point_grid_within_its_range() -> None:
    assert stepped(0.85, -1) == 0.80 and stepped(0.85, 1) == 0.90
    assert stepped(0.83, 1) == 0.90 and stepped(0.95, 1) == 0.95 and stepped(0.05, -1) == 0.05


def test_the_gauge_marks_move_with_the_threshold_and_are_dotted_when_off() -> None:
    usage = UsageEvent(tokens=50_000, window=100_000, window_source="config", reserve=5_000, margin=5_000,
                       compaction_threshold=0.5, summarize_threshold=0.6)
    on = str(render_gauge(usage, 30))
    bar = on[len("context "):len("context ") + 30]
    assert bar.index("┃") == int(0.5 * 0.9 * 30) and OFF_MARK not in on and OFF_LABEL not in on
    off = dataclasses.replace(usage, auto_compact=False)
    text = str(render_gauge(off, 30))
    assert text[len("context "):].index(OFF_MARK) == int(0.5 * 0.9 * 30) and OFF_LABEL in text
    assert str(render_gauge(off, "figures")).endswith(" off") and str(render_gauge(off, "percent")) == "50% off"


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((60, 20), id="60x20")])
def test_context_with_the_controls_changed(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(make_factory(tmp_path))

    async def changed(pilot) -> None:  # type: ignore[no-untyped-def]
        app.main_screen.dismiss_welcome()  # it names this run's temporary config directory
        await open_context(pilot, app)
        await pilot.press("minus", "minus", "a")
        await wait_until(pilot, lambda: controls_of(app) == (0.75, False), "75 %, off")

    assert snap_compare(app, terminal_size=size, run_before=changed)


def test_the_gauge_with_the_threshold_moved_and_compaction_off(snap_compare: SnapCompare, tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, window=32_000))  # a known window: no "window assumed" beside the bar
    app.runtime.set_compaction(threshold=0.5, auto=False)  # type: ignore[attr-defined]

    async def shown(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        app.main_screen.dismiss_welcome()
        await wait_until(pilot, lambda: app.main_screen.usage is not None and not app.main_screen.usage.auto_compact,
                         "the gauge off")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=shown)


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((60, 20), id="60x20")])
def test_the_question_before_a_summary(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(make_factory(tmp_path))

    async def asked(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        app.main_screen.dismiss_welcome()
        app.push_screen(SummaryConsentScreen(131_400, 120_000))
        await wait_until(pilot, lambda: isinstance(app.screen, SummaryConsentScreen), "the question")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=asked)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=["80x24", "60x20"])
async def test_every_control_stays_whole_in_the_dialog_on_a_small_terminal(tmp_path: Path,
                                                                            size: tuple[int, int]) -> None:
    """At 60x20 the five buttons wrap into three rows: the report gives way (it scrolls), the buttons stay whole
    inside the dialog, and each can be clicked."""
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=size) as pilot:
        screen = await open_context(pilot, app)
        await pilot.pause()
        dialog = screen.query_one(".dialog")
        for button in screen.query(Button):
            region = button.region
            assert region.height and dialog.region.contains_region(region), button.id
        body = screen.query_one("#breakdown-body")
        assert body.region.height >= 3 and dialog.region.contains_region(body.region)
        await pilot.click("#threshold-down")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.80, "the threshold down, clicked")
        await pilot.click("#compaction-reset")
        await wait_until(pilot, lambda: controls_of(app)[0] == 0.85, "reset, clicked")
        await pilot.click("#close")
        await wait_until(pilot, lambda: not isinstance(app.screen, ContextScreen), "closed by its button")
        await app.runtime.aclose()
