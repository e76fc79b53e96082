"""A fork lists what it inherited: Ctrl+B shows the outputs its copied tool blocks point to, the log shows its
parent's events from before the fork point — each marked as inherited from the parent."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

from textual.widgets import OptionList, Static

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tests.app.test_panel_snapshots import BASE, PanelApp, settle
from tui.agent.runtime_api import EvictedOutput, InheritedEvent
from tui.app.screens.basic_dialogs import ConfirmModal
from tui.app.widgets.chat_blocks import ToolBlock
from tui.app.widgets.event_log import EventLogPanel
from tui.app.widgets.evicted_browser import EvictedBrowser
from tui.chain.events import EvictedEvent


async def test_a_fork_lists_the_outputs_and_events_it_inherited(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, window=4_000)  # outputs over 1,000 tokens are evicted
    (factory.workdir / "big.txt").write_text("".join(f"row {n} of a long file\n" for n in range(400)))
    (factory.workdir / "other.txt").write_text("".join(f"line {n} of another file\n" for n in range(400)))
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read big.txt", "enter")
        await wait_idle(app, pilot)
        parent = app.runtime.info.session_id
        kept_upto = app.runtime.history_count()
        await pilot.press(*"read other.txt", "enter")  # after the fork point: not the fork's
        await wait_idle(app, pilot)
        [first_saved, later_saved] = app.runtime.evicted_outputs()
        assert "big" in first_saved.args and "other" in later_saved.args

        # fork at the first turn's answer, with a click on it and Ctrl+F, confirmed with a click
        answer = next(block for block in app.query(".assistant-block") if block.message_index == kept_upto - 1)
        answer.scroll_visible(animate=False)
        await pilot.pause()
        await pilot.click(answer, offset=(2, 0))
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the fork confirmation")
        await pilot.click("#confirm")
        await wait_until(pilot, lambda: app.runtime.info.parent == parent, "the fork")
        await wait_idle(app, pilot)
        fork = app.runtime
        assert [block.saved_path for block in app.query(ToolBlock)] == [first_saved.path]

        [inherited] = fork.evicted_outputs()
        assert inherited.path == first_saved.path and inherited.inherited_from == parent

        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.focused, OptionList), "the evicted list")
        browser = app.query_one(EvictedBrowser)
        summary = str(browser.query_one("#evicted-summary", Static).render())
        assert summary.startswith("1 output (1 inherited)"), summary
        option_list = browser.query_one("#evicted-list", OptionList)
        assert option_list.option_count == 1
        assert f"inherited from {parent[:8]}" in str(option_list.get_option_at_index(0).prompt)
        await pilot.click("#evicted-list", offset=(3, 0))  # the inherited output opens, as the fork's own would
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EvictedViewerScreen", "the viewer")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.screen_stack[0], "the viewer to close")

        await pilot.press("ctrl+l")
        log = app.query_one(EventLogPanel)
        await wait_until(pilot, lambda: log.visible_events, "the log")
        evicted = [event for event in log.visible_events if isinstance(event, EvictedEvent)]
        assert [event.path for event in evicted] == [str(first_saved.path)], "only what the fork inherited"
        rows = [str(option.prompt) for option in log.query_one("#event-list", OptionList).options]
        assert any("evicted" in row and f"inherited from {parent[:8]}" in row for row in rows), rows

        await pilot.press("ctrl+l")

    # a fork of the fork (the whole of it) still lists the grandparent's output, as the grandparent's
    grandchild = await factory.fork_session(fork.info.session_id)
    try:
        [output] = grandchild.evicted_outputs()
        assert output.path == first_saved.path and output.inherited_from == parent
        assert all(item.session == parent for item in grandchild.inherited_events())
    finally:
        await grandchild.aclose()


def _panels(tmp_path: Path) -> tuple[EvictedBrowser, EventLogPanel]:
    saved = tmp_path / "large_tool_results"
    saved.mkdir()
    (saved / "call_1.txt").write_text("x")
    (saved / "call_2.txt").write_text("x")
    parent_event = EvictedEvent(timestamp=BASE, tool_name="read_file", tool_call_id="call_1",
                                path=str(saved / "call_1.txt"), tokens=3_100, size_bytes=12_400,
                                args='{"path": "big.txt"}')
    own_event = EvictedEvent(timestamp=BASE + 60, tool_name="bash", tool_call_id="call_2",
                             path=str(saved / "call_2.txt"), tokens=1_200, size_bytes=4_800, args='{"command": "ls"}')
    outputs = [EvictedOutput(saved / "call_1.txt", "read_file", 12_400, 3_100, BASE, tool_call_id="call_1",
                             args='{"path": "big.txt"}', inherited_from="3fa2c1d4e5f6"),
               EvictedOutput(saved / "call_2.txt", "bash", 4_800, 1_200, BASE + 60, tool_call_id="call_2",
                             args='{"command": "ls"}')]
    browser = EvictedBrowser(outputs, now=lambda: BASE + 600, tz=UTC)
    log = EventLogPanel([own_event], inherited=[InheritedEvent(parent_event, "3fa2c1d4e5f6")],
                        now=lambda: BASE + 600, tz=UTC)
    return browser, log


def test_inherited_outputs_in_the_browser_at_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    browser, _ = _panels(tmp_path)
    assert snap_compare(PanelApp(browser), terminal_size=(80, 24), run_before=settle)


def test_inherited_events_in_the_log_at_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, log = _panels(tmp_path)
    assert snap_compare(PanelApp(log), terminal_size=(80, 24), run_before=settle)
