"""/context and the gauge give one figure for what is in context: /context's total is the gauge's (the provider's
count at the last request plus an estimate since), and the rows' sum is labelled as the estimate it is."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.app.app_support import make_app, wait_idle, wait_until
from tests.app.test_compaction_visibility import seed_session, summarizing_factory
from tests.app.test_snapshots import fixed_ids_and_clock, seeded_app  # noqa: F401  (autouse: fixed ids and clock)
from tui.agent.session.factory import SessionRequest
from tui.app.screens.context_report import ContextScreen
from tui.app.widgets.gauge import ContextGauge
from tui.chain.events import UsageEvent
from tui.text.token_text import human_tokens


async def test_context_totals_the_gauges_figure_and_names_the_estimate(tmp_path: Path) -> None:
    factory, _ = summarizing_factory(tmp_path, "vague", window=50_000)
    app = make_app(factory, SessionRequest(resume=seed_session(factory, 4)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_idle(app, pilot)
        usage = app.usage
        assert usage is not None
        gauge = str(app.query_one(ContextGauge).render())
        assert f"{human_tokens(usage.tokens)} / 50k" in gauge, gauge
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        report = str(screen.query_one("#breakdown", Static).render())
        assert f"in context  {human_tokens(usage.tokens)} of 50k tokens ({usage.tokens / 500:.1f}%)" in report
        assert "as the gauge: the provider's count at the last request plus an estimate" in report
        estimate = screen.report.total
        assert f"rows (estimated)  {human_tokens(estimate)}: each part's size estimated" in report
        assert "total (estimated)" not in report


def test_context_screen_with_the_gauges_figure(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The footer when the count and the rows' estimate differ: both, each with its name."""
    async def open_report(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.usage = UsageEvent(tokens=1_234, window=200_000, window_source="model", reserve=16_000,
                                     margin=10_000)
        await pilot.pause()
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ContextScreen), "/context")

    assert snap_compare(seeded_app(tmp_path), terminal_size=(80, 24), run_before=open_report)
