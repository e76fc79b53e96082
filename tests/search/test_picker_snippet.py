"""A content hit's snippet under a picker row is cut around the match, so the match shows at 80 and 60
columns (the search's snippet is wider than the row, with the match a third of the way in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.app_support import make_app, make_factory, wait_until
from tests.search.support import exchange
from tests.search.test_picker_search import fixed_ids_and_clock, picker
from tui.agent.session.factory import RuntimeFactory
from tui.app.app import DeepTuiApp
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.screens.session_search import HIGHLIGHT_END, HIGHLIGHT_START, fit_snippet

__all__ = ["fixed_ids_and_clock"]

WORDS = " ".join(f"word{number}" for number in range(1, 81))


def seeded(tmp_path: Path) -> RuntimeFactory:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    handle.append_messages([*exchange("count for me", "ok"), *exchange("and on", "ok"),
                            *exchange("once more", WORDS)])
    handle.rename("Counting words")
    handle.close()
    return factory


def screen_lines(app: DeepTuiApp) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def search_word42(app: DeepTuiApp, pilot) -> str:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen) and picker(app)._loaded, "the picker")
    await pilot.press(*"word42")
    await wait_until(pilot, lambda: any("message 6" in line for line in screen_lines(app)), "the snippet row")
    await pilot.pause()
    [line] = [line for line in screen_lines(app) if "message 6" in line]
    return line


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_the_match_shows_in_the_row_snippet(tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(seeded(tmp_path))
    async with app.run_test(size=size) as pilot:
        line = await search_word42(app, pilot)
        snippet = line.split("assistant  ", 1)[1].split("│", 1)[0].strip()
        assert "word41 word42 word43" in snippet if size[0] == 80 else "1 word42 word43" in snippet, line
        assert snippet.startswith("…") and snippet.endswith("…"), line  # cut on both sides, the match inside
        option_list = picker(app).session_list
        [prompt] = [str(option.prompt) for option in option_list.options if "message 6" in str(option.prompt)]
        assert "word42" in prompt
        await pilot.resize_terminal(120, 36)  # wider: more of the text around it, the match still shown
        await wait_until(pilot, lambda: any("word42" in line and "word49" in line for line in screen_lines(app)),
                         "the wider snippet")


def test_fit_snippet_keeps_the_match_and_its_marks() -> None:
    snippet = "…" + " ".join(f"w{n}" for n in range(30)) + f" {HIGHLIGHT_START}target{HIGHLIGHT_END} tail…"
    fitted = fit_snippet(snippet, 30)
    assert len(fitted.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_END, "")) == 30
    assert f"{HIGHLIGHT_START}target{HIGHLIGHT_END}" in fitted and fitted.startswith("…")
    assert fit_snippet("short one", 30) == "short one"
    long_match = f"{HIGHLIGHT_START}{'x' * 50}{HIGHLIGHT_END} after"
    assert fit_snippet(long_match, 20).startswith(HIGHLIGHT_START + "x")  # the match starts the line
    assert fit_snippet(long_match, 20).endswith("…")


def test_picker_content_hit_at_80x24_snapshot(snap_compare, tmp_path: Path, fixed_ids_and_clock: None) -> None:  # type: ignore[no-untyped-def]
    app = make_app(seeded(tmp_path))

    async def search(pilot) -> None:  # type: ignore[no-untyped-def]
        await search_word42(app, pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=search)
