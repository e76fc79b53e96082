"""A compaction divider made in the running session (by /compact or automatically mid-turn) is whole at once:
"show the replaced messages" is there without reopening, and what it shows can be hidden again (click or key)."""

from __future__ import annotations

from pathlib import Path

from textual.widget import Widget
from textual.widgets import Button

from tests.app.app_support import (
    app_on_a_long_session,
    make_app,
    read_spec_three_times,
    reply_model,
    spec_factory,
    wait_idle,
    wait_until,
)
from tests.app.test_snapshots import fixed_ids_and_clock, seeded_app  # noqa: F401  (autouse: fixed ids and clock)
from tui.app.app import DeepTuiApp
from tui.app.widgets.chat_blocks import CompactionDivider
from tui.app.widgets.chat_view import ChatView
from tui.chain.events import CompactionFinished


async def _click_in_view(chat: ChatView, pilot, widget: Widget) -> None:  # type: ignore[no-untyped-def]
    chat.scroll_to_widget(widget, animate=False, top=True)
    await pilot.pause()
    await pilot.click(widget)


async def _toggle_both_ways(app: DeepTuiApp, pilot, divider: CompactionDivider) -> None:  # type: ignore[no-untyped-def]
    """Expand the divider, then show / hide / show / hide its replaced messages: by click, then by key."""
    chat = app.query_one(ChatView)
    chat.release_anchor()  # as scrolling up to it with the wheel does
    chat.scroll_to_widget(divider, animate=False, top=True)
    await pilot.pause()
    await pilot.click(divider.query_one("CollapsibleTitle"))
    await wait_until(pilot, lambda: not divider.collapsed, "the divider to expand")
    button = divider.query_one(".divider-show", Button)
    assert button.display and str(button.label) == "show the replaced messages"
    await _click_in_view(chat, pilot, button)
    await wait_until(pilot, lambda: divider.query(".original-line"), "the replaced messages")
    start, end = divider.info.replaced_range or (0, 0)
    assert end - start == divider.info.replaced > 0
    assert len(divider.query(".original-line")) >= 1
    assert divider.originals_shown and str(button.label) == "hide the replaced messages"
    await _click_in_view(chat, pilot, button)
    await wait_until(pilot, lambda: not divider.originals_shown, "the replaced messages to hide")
    assert not divider.query_one(".divider-originals").display and str(button.label) == "show the replaced messages"
    button.focus()
    # a button ignores presses while it shows the last one (0.2 s): as a person, wait that long between presses
    await wait_until(pilot, lambda: not button.has_class("-active"), "the click's effect to end")
    assert app.focused is button, app.focused
    await pilot.press("enter")
    await wait_until(pilot, lambda: divider.originals_shown, "shown again (Enter)")
    await wait_until(pilot, lambda: not button.has_class("-active"), "the key's effect to end")
    await pilot.press("enter")
    await wait_until(pilot, lambda: not divider.originals_shown, "hidden again (Enter)")


async def test_a_manual_compaction_divider_shows_and_hides_its_originals_live(tmp_path: Path) -> None:
    app = make_app(spec_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await read_spec_three_times(app, pilot)
        await pilot.press(*"/compact keep the notes", "enter")  # at once, no dialog
        await wait_until(pilot, lambda: app.query(CompactionDivider), "the divider")
        await wait_idle(app, pilot)
        [result] = [e for e in app.runtime.past_events() if isinstance(e, CompactionFinished) and e.focus]
        divider = app.query_one(CompactionDivider)
        assert divider.message_index == result.summary_index
        await _toggle_both_ways(app, pilot, divider)


async def test_an_automatic_compaction_divider_shows_and_hides_its_originals_live(tmp_path: Path) -> None:
    app = app_on_a_long_session(tmp_path, reply_model("noted."), window=6_000)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"go on", "enter")
        await wait_idle(app, pilot)
        [compaction] = [e for e in app.runtime.past_events()
                        if isinstance(e, CompactionFinished) and e.strategy == "summary"]
        assert compaction.trigger == "auto"
        await wait_until(pilot, lambda: app.query(CompactionDivider), "the divider")
        divider = app.query_one(CompactionDivider)
        assert divider.info.replaced_range is not None, "the live divider knows what it replaced"
        await _toggle_both_ways(app, pilot, divider)


def test_shown_originals_can_be_hidden_at_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def show(pilot) -> None:  # type: ignore[no-untyped-def]
        divider = pilot.app.query_one(CompactionDivider)
        divider.collapsed = False
        await pilot.pause()
        divider.query_one(".divider-show", Button).press()
        await wait_until(pilot, lambda: divider.originals_shown, "the replaced messages")
        chat = pilot.app.query_one(ChatView)
        chat.release_anchor()
        chat.scroll_to_widget(divider.query_one(".divider-show"), animate=False, top=True)
        await pilot.pause()

    assert snap_compare(seeded_app(tmp_path, with_summary=True), terminal_size=(80, 24), run_before=show)
