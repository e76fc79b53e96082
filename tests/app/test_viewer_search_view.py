"""The evicted-output viewer's search: a hit that fits leaves the view at column 0, keys typed right after "/"
reach the search box, and the hint says what Esc does there."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import App
from textual.widgets import Input, Static, TextArea

from tui.app.screens.evicted_viewer import EvictedViewerScreen

STYLES = Path(__file__).resolve().parents[2] / "styles" / "panels.tcss"


class ViewerApp(App[None]):
    CSS_PATH = STYLES

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def on_mount(self) -> None:
        self.push_screen(EvictedViewerScreen(self.path))


def _output(tmp_path: Path) -> Path:
    path = tmp_path / "out.txt"
    lines = [f"row {n}: the quick brown fox jumps over the lazy dog {n} again" for n in range(3000)]
    lines[2000] = "row 2000: " + "far " * 40 + "needle at the end"
    path.write_text("\n".join(lines) + "\n")
    return path


async def _viewer(app: ViewerApp, pilot) -> EvictedViewerScreen:  # type: ignore[no-untyped-def]
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, EvictedViewerScreen)
    return app.screen


def _typed_at_once(app: App[None], keys: str) -> None:
    """Keys as a terminal delivers a burst (tmux, a paste): all queued before the app handles the first."""
    for key in keys:
        app.post_message(events.Key({"/": "slash", " ": "space"}.get(key, key), key))


async def test_a_hit_that_fits_is_shown_from_the_first_column(tmp_path: Path) -> None:
    app = ViewerApp(_output(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = await _viewer(app, pilot)
        text = viewer.query_one("#viewer-text", TextArea)
        await pilot.press("slash", *"dog 2786", "enter")
        await pilot.pause()
        assert text.selection.start == (2786, 50) and text.selected_text == "dog 2786"
        assert text.scroll_offset.x == 0, "the line fits: no sideways scroll"
        top = text.scroll_offset.y
        assert top < 2786 < top + text.scrollable_content_region.height

        viewer.query_one("#viewer-search", Input).value = "needle"
        await pilot.pause()
        assert text.selection.start[0] == 2000
        assert text.scroll_offset.x > 0, "a hit past the width scrolls just far enough to show it"
        end_x, _ = text.wrapped_document.location_to_offset(text.selection.end)
        visible_width = text.scrollable_content_region.width - text.gutter_width
        assert text.scroll_offset.x <= end_x < text.scroll_offset.x + visible_width


async def test_keys_typed_right_after_slash_and_after_no_match_reach_the_search_box(tmp_path: Path) -> None:
    app = ViewerApp(_output(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = await _viewer(app, pilot)
        search = viewer.query_one("#viewer-search", Input)
        _typed_at_once(app, "/zzzq")
        await pilot.pause()
        assert search.value == "zzzq" and search.has_focus
        await pilot.press("enter")
        assert str(viewer.query_one("#viewer-matches", Static).render()) == "no matches"
        _typed_at_once(app, "x")
        await pilot.pause()
        assert search.value == "zzzqx", "after a search with no match, typing goes on in the box"
        search.value = ""
        _typed_at_once(app, "dog 12 ")
        await pilot.pause()
        assert search.value == "dog 12 " and viewer.query_one("#viewer-text", TextArea).selection.start[0] == 12
        await pilot.press("slash")
        assert search.value == "dog 12 /", "in the search box / is a character (a path is searched for)"


async def test_the_hint_says_the_first_esc_leaves_the_search(tmp_path: Path) -> None:
    app = ViewerApp(_output(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = await _viewer(app, pilot)
        dialog = viewer.query_one(".dialog")
        assert "esc close" in str(dialog.border_subtitle)
        await pilot.click("#viewer-search")
        await pilot.pause()
        assert str(dialog.border_subtitle) == EvictedViewerScreen.SEARCH_HINT
        assert "esc back to the text" in EvictedViewerScreen.SEARCH_HINT
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is viewer and viewer.query_one("#viewer-text", TextArea).has_focus
        assert "esc close" in str(dialog.border_subtitle)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not viewer
