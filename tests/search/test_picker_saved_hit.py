"""A content hit inside a saved (evicted) output: the chat's tool block shows only a preview with the middle
omitted, so opening the hit from the picker also opens the saved output at the match, selected."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TextArea

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tests.search.test_picker_search import option_texts, picker, type_query
from tui.app.app import DeepTuiApp
from tui.app.screens.evicted_viewer import EvictedViewerScreen
from tui.app.screens.session_list import SessionList
from tui.app.widgets.chat_blocks import ToolBlock

NEEDLE = "zanzibar"


async def _session_with_a_saved_hit(tmp_path: Path) -> tuple[DeepTuiApp, str]:
    factory = make_factory(tmp_path, window=4_000)  # outputs over 1,000 tokens are evicted
    rows = [f"row {n} of a long file\n" for n in range(400)]
    rows[200] = f"row 200 holds the {NEEDLE} clause\n"
    (factory.workdir / "big.txt").write_text("".join(rows))
    app = make_app(factory)
    return app, str(factory.workdir)


async def _opened_at_the_match(app: DeepTuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: isinstance(app.screen, EvictedViewerScreen), "the saved output to open")
    viewer = app.screen
    assert isinstance(viewer, EvictedViewerScreen)
    await wait_until(pilot, lambda: viewer.current_match is not None, "the match to be selected")
    text_area = viewer.query_one("#viewer-text", TextArea)
    assert text_area.selected_text.lower() == NEEDLE
    assert text_area.selection.start[0] == 200, "the row of the match, not the top of the file"
    assert viewer.query_one("#viewer-search", Input).value.lower() == NEEDLE
    [block] = app.query(".-search-hit")
    assert isinstance(block, ToolBlock) and not block.collapsed and block.saved_path == viewer.path
    assert NEEDLE not in str(block._result.render()), "the chat's preview does not show it (why the file opens)"


async def test_opening_a_hit_in_a_saved_output_opens_it_at_the_match(tmp_path: Path) -> None:
    app, _ = await _session_with_a_saved_hit(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read big.txt", "enter")
        await wait_idle(app, pilot)
        await pilot.press(*"/new", "enter")  # the hit is in another session: opening it switches there
        await wait_idle(app, pilot)
        await type_query(app, pilot, NEEDLE)
        [hit] = [text for text in option_texts(app) if NEEDLE in text]
        picker(app).query_one(SessionList).highlighted = option_texts(app).index(hit)
        await pilot.press("enter")
        await _opened_at_the_match(app, pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.screen_stack[0], "the viewer to close")

        # the same from the open session, by a click on the row
        await type_query(app, pilot, NEEDLE)
        await pilot.click(SessionList, offset=(20, 1))
        await _opened_at_the_match(app, pilot)
